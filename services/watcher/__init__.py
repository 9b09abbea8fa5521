"""The watcher: one observer per input folder, turning stable files into jobs."""
