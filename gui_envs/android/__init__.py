"""Android environments: device backends (uiautomator2, the simulated phone), hierarchy parsing, phone apps."""
