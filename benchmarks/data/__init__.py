"""A benchmark's data: downloads and archives, hub access, its published record files and local task files."""
