"""Scrapy peer for bench/e2e/peers: a breadth-first crawl that follows every <a href> and
<frame src>, started by run.ts with `scrapy runspider scrapy_peer.py -a seeds=<file> -s ...`.
The page budget is CLOSESPIDER_PAGECOUNT (Scrapy stops by itself); the proxy comes from the
http_proxy environment variable (HttpProxyMiddleware)."""
import scrapy


class PeerSpider(scrapy.Spider):
    name = "peer"

    def __init__(self, seeds=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        with open(seeds) as f:
            self.start_urls = [line.strip() for line in f if line.strip()]

    def parse(self, response):
        if not isinstance(response, scrapy.http.HtmlResponse):
            return  # non-HTML (text/plain, pdf, image): no links
        for href in response.css("a::attr(href), frame::attr(src), iframe::attr(src)").getall():
            yield response.follow(href, callback=self.parse)
