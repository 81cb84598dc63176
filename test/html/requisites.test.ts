/**
 * Page requisites in the HTML extractor (ExtractOptions.requisites) and the URLs of CSS
 * (src/html/css.ts cssUrls, collect.ts srcsetUrls): each kind of embed a browser fetches to render
 * a page is reported with `embed: true`, in source order, by the fast path and the parse5 reference
 * alike; without the option none is; CSS comments and strings hide nothing they should not and
 * show nothing they should not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractLinks, extractLinksReference, cssUrls, srcsetUrls, decodeCss } from '../../src/html/index.js';

test('cssUrls: url() quoted and not, @import strings, escapes; comments, strings and bad urls give nothing', () => {
  assert.deepEqual(cssUrls('a{background:url(a.png)} b{x:URL( "b.png" )} c{y:url(\'c.png\')}'), ['a.png', 'b.png', 'c.png']);
  assert.deepEqual(cssUrls('@import "i.css"; @import url(j.css) screen; @IMPORT \'k.css\';'), ['i.css', 'j.css', 'k.css']);
  assert.deepEqual(cssUrls('/* url(no.png) @import "no.css"; */ x{content:"url(no2.png)"} y{z:url(yes.png)}'), ['yes.png']);
  assert.deepEqual(cssUrls('x{y:url(\\61 .png)} z{w:url("q\\"r.png")}'), ['a.png', 'q"r.png']);
  assert.deepEqual(cssUrls('x{y:url(a b.png)} z{w:url(c(d).png)}'), [], 'a bad url token is no URL');
  assert.deepEqual(cssUrls('x{y:myurl(a.png)} @importx "b.css";'), [], 'url( and @import only as whole names');
  assert.deepEqual(cssUrls('@font-face{src:url(f.woff2) format("woff2"),url(f.woff)} x{y:image-set(url(1x.png) 1x, "2x.png" 2x)}'), ['f.woff2', 'f.woff', '1x.png']);
  // A style attribute's declarations: an @import there is no rule (fast and reference alike).
  assert.deepEqual(cssUrls('@import "i.css"; x:url(y.png)', false), ['y.png']);
  for (const h of ['<div style=\'@import "i.css"; background:url(y.png)\'>', '<a\u0000 STYLE=\'@import "\'>']) {
    const want = h.includes('y.png') ? ['y.png'] : [];
    assert.deepEqual(extractLinks(h, { requisites: true }).links.map((l) => l.value), want, h);
    assert.deepEqual(extractLinksReference(h, { requisites: true }).links.map((l) => l.value), want, h);
  }
  assert.deepEqual(cssUrls('x{y:url(   )}'), []);
  assert.deepEqual(cssUrls(''), []);
});

test('decodeCss: BOM, then the HTTP charset, then @charset, then UTF-8', () => {
  const latin1 = new Uint8Array([...Buffer.from('@charset "iso-8859-1"; x{y:url(caf'), 0xe9, ...Buffer.from('.png)}')]);
  assert.deepEqual(cssUrls(decodeCss(latin1).text), ['café.png']);
  assert.equal(decodeCss(latin1).charset, 'iso-8859-1');
  assert.equal(decodeCss(latin1, 'utf-8').charset, 'utf-8');
  assert.equal(decodeCss(new Uint8Array([0xef, 0xbb, 0xbf, 0x78]), 'iso-8859-1').charset, 'utf-8');
  assert.equal(decodeCss(Buffer.from('@charset "no-such-label"; x{}')).charset, 'utf-8');
});

test('srcsetUrls: candidates split at commas outside descriptors; a URL ending in commas ends its candidate', () => {
  assert.deepEqual(srcsetUrls('a.png 1x, b.png 2x'), ['a.png', 'b.png']);
  assert.deepEqual(srcsetUrls('  a.png, b.png 480w,c.png,'), ['a.png', 'b.png', 'c.png']);
  assert.deepEqual(srcsetUrls('a.png,b.png 2x'), ['a.png,b.png'], 'a comma inside a URL is part of it');
  assert.deepEqual(srcsetUrls('a.png (x, y) 1x, b.png'), ['a.png', 'b.png']);
  assert.deepEqual(srcsetUrls(''), []);
});

const PAGE = `<!DOCTYPE html><html><head>
<link rel=stylesheet href=s.css><link rel="shortcut icon" href=f.ico><link rel=alternate href=alt.html>
<script src=s.js></script><style>@import "i.css"; body{background:url(bg.png)}</style></head>
<body><a href=next.html>next</a><img src=i.png srcset="i2.png 2x">
<picture><source srcset="p.webp 1x, p2.webp 2x"></picture>
<video src=v.mp4 poster=v.jpg><track src=t.vtt></video><audio src=a.ogg></audio>
<object data=o.svg></object><embed src=e.svg><input type=image src=in.png>
<div style="background:url(d.png)">x</div><iframe src=frame.html></iframe></body></html>`;

test('extractLinks with requisites: every kind of embed, in source order, links unchanged; without it none', () => {
  const want = [
    ['s.css', true], ['f.ico', true], ['alt.html', false], ['s.js', true], ['i.css', true], ['bg.png', true], ['next.html', false],
    ['i.png', true], ['i2.png', true], ['p.webp', true], ['p2.webp', true], ['v.mp4', true], ['v.jpg', true], ['t.vtt', true],
    ['a.ogg', true], ['o.svg', true], ['e.svg', true], ['in.png', true], ['d.png', true], ['frame.html', false],
  ];
  for (const f of [extractLinks, extractLinksReference]) {
    const r = f(PAGE, { requisites: true });
    assert.deepEqual(r.links.map((l) => [l.value, l.embed]), want, f.name);
    const plain = f(PAGE, {});
    assert.deepEqual(plain.links.map((l) => [l.value, l.embed]), [['s.css', false], ['f.ico', false], ['alt.html', false], ['next.html', false], ['frame.html', false]], `${f.name} without requisites`);
  }
});
