"""The haru API server: an aiohttp application that speaks the Kubernetes v1.36 wire protocol."""
