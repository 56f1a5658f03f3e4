"""The order of requests (the frontier) and scrapy-redis's shared queue made safe (docs/frontier.md,
docs/redis_queue.md)."""
