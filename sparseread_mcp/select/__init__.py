"""Which configuration answers a read: the Configuration value (configuration.py), the calibrated selector
(selector.py, its table calibration.json), what this installation may choose (policy.py), and the tool that
builds the table (calibrate.py)."""
