"""``python -m spatialclaw.benchmarks.devset DIR``: write the dev set into DIR (see :mod:`.build`)."""

from spatialclaw.benchmarks.devset.build import main

raise SystemExit(main())
