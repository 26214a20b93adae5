"""The machine-config server: an aiohttp app over a store that negotiates the spec version and serves."""
