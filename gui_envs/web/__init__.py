"""Web environments: real Chromium driven by Playwright."""
