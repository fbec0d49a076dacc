# A CPU image of spatialclaw: the locked environment (requirements/lock.txt, hash-checked, torch as the CPU
# build from the PyTorch CPU index), then the demo and the default test suite. The steps are those of
# scripts/bootstrap.sh (tests/test_dockerfile.py checks that they stay the same).
#
#   docker build -t spatialclaw .
#   docker run --rm spatialclaw                       # the default test suite
#   docker run --rm spatialclaw spatialclaw demo      # the demo
FROM python:3.11-slim-bookworm

# the Debian packages bootstrap.sh installs: Open3D (libusb, libgl), torch (libgomp), the kernel sandbox (bubblewrap)
RUN apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libusb-1.0-0 libgl1 libgomp1 bubblewrap git \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /spatialclaw
COPY requirements/lock.txt requirements/lock.txt
RUN python -m venv .venv \
    && .venv/bin/python -m pip install -q --extra-index-url https://download.pytorch.org/whl/cpu --require-hashes --no-deps -r requirements/lock.txt

COPY . .
RUN .venv/bin/python -m pip install -q --no-deps --no-build-isolation -e . \
    && .venv/bin/python scripts/check_env.py

ENV PATH=/spatialclaw/.venv/bin:$PATH \
    HF_HUB_OFFLINE=1
RUN spatialclaw demo --out /tmp/demo
CMD ["python", "-m", "pytest", "-q", "--timeout=600"]
