"""The sample spiders: one per scope, each configuring scrapy-urlunify in ``custom_settings``."""
