"""Which reader configuration answers a request: the selector, its calibration table and the tool that builds it."""
