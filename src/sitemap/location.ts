/**
 * Which URLs a sitemap may list (sitemaps.org, "Sitemap file location" and "Sitemaps &
 * Cross Submits"):
 *   - a URL under the sitemap's directory — same scheme, host and port, and a path that starts with
 *     the sitemap's path up to its last `/` (a `/` in the sitemap's query does not count);
 *   - any URL on a host whose robots.txt named the sitemap (or the sitemap index it came from):
 *     naming it there proves authority over that host, wherever the file itself is served.
 * Everything else is refused (CRAWL_SITEMAP_CROSS_HOST).
 */

/** The sitemap's directory as scheme://host[:port]/path/ (query and file name cut), or null. */
export function sitemapBase(sitemapUrl: string): string | null {
  let u: URL;
  try {
    u = new URL(sitemapUrl);
  } catch {
    return null;
  }
  const dir = u.pathname.slice(0, u.pathname.lastIndexOf('/') + 1);
  return `${u.protocol}//${u.host}${dir}`;
}

/** The protocol's location rule alone: `url` is under the sitemap's directory. */
export function underSitemap(sitemapUrl: string, url: string): boolean {
  const base = sitemapBase(sitemapUrl);
  if (base === null) return false;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  return `${u.protocol}//${u.host}${u.pathname}`.startsWith(base);
}

/**
 * `url` may be taken from the sitemap at `sitemapUrl`: under its directory, or on `announcedBy`,
 * the host whose robots.txt named the sitemap (null when that is not known).
 */
export function allowedInSitemap(sitemapUrl: string, url: string, urlHost: string, announcedBy: string | null): boolean {
  if (announcedBy !== null && urlHost === announcedBy) return true;
  return underSitemap(sitemapUrl, url);
}
