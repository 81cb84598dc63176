/** fast-check generators of HTML-ish strings that stress the tokenizer paths the extractors share. */
import fc from 'fast-check';

const FRAGMENTS = [
  '<a href=', '<a href="', "<a href='", '<A HREF=', '<area href=', '<link rel=nofollow href=', '<LINK href=',
  '<iframe src=', '</iframe>', '<frame src=f>', '<img src=', '<image src=', '<IMG SRC=', '<base href=', '<base>',
  '<meta http-equiv=refresh content="', '<meta http-equiv=REFRESH content=', '0; url=', '5;URL=\'', '.5, u r l = ',
  '<meta name=robots content=', '<meta name=" Robots " content="', 'noindex', 'NOFOLLOW', 'none', ',',
  ' rel="nofollow"', ' rel=NoFollow', ' rel="x nofollow"', ' href=', ' src=', ' href', ' HREF=dup', 'x', 'y/z?q=1#f',
  '"', "'", '>', '<', '</', '/', '=', ' ', '\n', '\r\n', '\r', '\t', '\f', '\0', '/>', '</a>', '</A >',
  '<!--', '-->', '--!>', '<!-->', '<!--->', '-', '<!', '<!DOCTYPE html>', '<!doctype', '<?xml ?>', '<![CDATA[', ']]>',
  '<script>', '<SCRIPT type=x>', '</script>', '</script', '</SCRIPT >', '<script ', '<!--<script>', '</script>-->',
  '<style>', '</style>', '</style', '<title>', '</title>', '<textarea>', '</textarea>', '<xmp>', '</xmp>',
  '<noembed>', '</noembed>', '<noframes>', '</noframes>', '<noscript>', '</noscript>', '<plaintext>',
  '<svg>', '</svg>', '<math>', '<select>', '<template>', '<frameset>', '<table>', '<tr>', '<td>', '<b>', '<p>', '<div ',
  '<head>', '<body>', '</body>', '</html>', '<col>',
  '<svg viewBox="0 0 1 1">', '<SVG/>', '<svg/ >', '<path d="M0 0"/>', '<path>', '</path>', '<g>', '</g>', '</G>', '<use xlink:href=#i />',
  '<linearGradient>', '</lineargradient>', '<foreignObject>', '<desc>', '</desc>', '<style>a>b{}</style>', '<font color=red>', '<font>',
  '</p>', '</br>', '<math>', '</math>', '<mi>', '<![CDATA[<a href=cd>]]>',
  '&amp;', '&amp', '&AMP;', '&copy', '&copy=', '&copyx', '&#x41;', '&#65', '&#0;', '&#x80;', '&#xD800;', '&notin',
  '&notin;', '&not;', '&not', '&;', '&', '&#', '&#x;', '&lt;', '&gt', '&quot;', '&apos;', 'ü', '\u212a', 'İ', '😀',
  // page requisites (ExtractOptions.requisites): media, objects, CSS URLs in style attributes and <style> blocks
  '<source srcset="a.webp 1x, b.webp 2x">', '<video src=v.mp4 poster=p.png>', '<audio src=a.ogg>', '<track src=t.vtt>',
  '<embed src=e.swf>', '<object data=o.svg>', '<input type=image src=i.png>', '<INPUT TYPE=IMAGE SRC=j.png>',
  '<link rel=stylesheet href=s.css>', '<link rel="shortcut icon" href=f.ico>', '<script src=s.js></script>',
  '<div style="background:url(d.png)">', '<p style=\'b: URL( "e.png" )\'>', '<style>@import "i.css"; a{b:url(u.png)}</style>',
  '<style>/* url(no) */ x{y:url(\\61 .png)}</style>', '<html style="background:url(h.png)">', '<body style="background:url(b.png)">', '<body style="x:url(b2.png)">', 'text<body style="background:url(b3.png)">',
  '<select><option style="x:url(o.png)">', '<table style="background:url(t.png)"><img src=f.png>',
];

const VALUE_PIECES = ['x', '/p?q=1', '#f', ' ', '\r\n', '\r', '\n', '\0', '&amp;', '&amp', '&copy=', '&copy', '&notin', '&#x41;',
  '&#0;', '&#13;', '&', '>', '"', "'", '=', '<', '`', 'nofollow', 'NoFollow', 'noindex', 'none', ',', '0;url=', '5; URL=\'',
  'refresh', 'Refresh', 'robots', 'ROBOTS', '\u212a', 'ü', '</a>', '<!--', '-->',
  'url(', 'URL(', ')', 'a.png 1x', ', ', 'b.png 2x,', '(1,2)', '@import ', 'stylesheet', 'icon', 'image', 'IMAGE', '\\'];
const value = fc.array(fc.constantFrom(...VALUE_PIECES), { maxLength: 6 }).map((a) => a.join(''));
const attr = fc
  .tuple(
    fc.constantFrom(' ', '  ', '\n', '\r\n', '\t', '/', '', ' /'),
    fc.constantFrom('href', 'HREF', 'Href', 'src', 'SRC', 'rel', 'content', 'name', 'http-equiv', 'HTTP-EQUIV', 'x', '"q', "'", '=h', 'hr\0ef',
      'srcset', 'poster', 'data', 'style', 'STYLE', 'type'),
    fc.constantFrom('=', ' = ', '=\n', '', ' '),
    fc.constantFrom('"', "'", ''),
    value,
  )
  .map(([sep, name, eq, q, v]) => (eq === '' ? sep + name : sep + name + eq + q + v + q));
const linkTag = fc
  .tuple(
    fc.constantFrom('<a', '<A', '<area', '<link', '<LINK', '<iframe', '<img', '<image', '<base', '<meta', '<meta http-equiv=refresh',
      '<meta name=robots', '<a\0', '<ab', '<script', '<title', '<div',
      '<source', '<video', '<audio', '<track', '<embed', '<object', '<input', '<style', '<span', '<html', '<body', '<p', '<td'),
    fc.array(attr, { maxLength: 4 }),
    fc.constantFrom('>', '/>', ' >', '', '>text</a>', '>\n'),
  )
  .map(([t, attrs, close]) => t + attrs.join('') + close);

/**
 * Random concatenations of HTML fragments and link-bearing tags with random attributes (quotes,
 * entities, CR/NUL, duplicates), mixed with comments, raw-text elements, DOCTYPEs…
 */
const NOISE = ['x', ' ', '\n', '<', '>', '-', '--', '!', '/', '"', "'", '<!--', '-->', '--!>', '--->', '<!-', '</', '<script>',
  '<script ', '</script>', '</script', '</SCRIPT >', '</scripts>', '<scriptx>', '</style>', '</title>', '</textarea>', '</xmp >',
  '</iframe>', '</noembed>', '</noframes>', '<a href=in>', '<a href="q>">', '</a>', '&amp;', '<svg>', '<svg/>', '</svg>', '<g/>', '</g>',
  '<![CDATA[', ']]>', '<select>', '</select>', '<option>', '<input>', '<textarea>', '<td>'];
const inner = fc.array(fc.oneof(fc.constantFrom(...NOISE), linkTag), { maxLength: 8 }).map((a) => a.join(''));
const block = fc
  .tuple(
    fc.constantFrom('<script>', '<SCRIPT type=x>', '<script><!--', '<style>', '<title>', '<textarea>', '<xmp>', '<iframe src=i>',
      '<svg>', '<svg><g>', '<svg><path d=x/><symbol id=s>', '<svg><![CDATA[', '<svg><title>', '<svg><script>', '<select>', '<select><option>', '<SELECT name=x><optgroup>', '<select><title>', '<select><iframe>',
      '<noembed>', '<noframes>', '<noscript>', '<!--', '<!', '<?', '<!DOCTYPE ', '<b title="', '<table>', '<template>', '<svg>', '<select>'),
    inner,
    fc.constantFrom('</script>', '--></script>', '</style>', '</title>', '</textarea>', '</xmp>', '</iframe>', '</noembed>',
      '</noframes>', '</noscript>', '-->', '--!>', '</svg>', '</g></svg>', ']]></svg>', '</symbol></SVG >', '</select>', '<input>', '<textarea>', '<select>', '</SELECT >', '>', '">', '</table>', '</template>', '</svg>', '</select>', ''),
  )
  .map(([o, m, c]) => o + m + c);
export const htmlish = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: linkTag },
      { weight: 2, arbitrary: block },
      { weight: 1, arbitrary: fc.constantFrom(...FRAGMENTS) },
    ),
    { maxLength: 16 },
  )
  .map((a) => a.join(''));

/** Random strings over a small alphabet of tokenizer-relevant characters. */
export const chaos = fc
  .array(fc.constantFrom('<', '>', '/', '!', '-', '"', "'", '=', ' ', '&', ';', 'a', 'A', 'h', 'r', 'e', 'f', 's', '\n', '\r', '\0', 'i', 'm', 'g', 'c', 'p', 't', 'b', 'l', 'k', 'n', 'o', 'x'), { maxLength: 80 })
  .map((a) => a.join(''));

const HEADISH = ['<!DOCTYPE html>', '<html lang=en>', '<head>', '<title>t</title>', '<meta charset=utf-8>', '<link href=/l>', '<base href=/b/>',
  '<script>var a="<frameset>"</script>', '<style>s{}</style>', '</head>', ' ', '\n', '<!-- c -->', '<noframes><a href=nf></noframes>',
  '<noscript>', 'x', '<body>', '</body>', '</html>', '<frame src=early>', '<p>', '&nbsp;', '<', '</title>', '<bgsound>'];
const FRAMESET_BODY = ['<frame src=f1>', '<FRAME SRC="/f2" />', '<frameset rows=2>', '</frameset>', '</FRAMESET >', '<noframes><frame src=nf></noframes>',
  '<a href=ignored>', '<script>', '</script>', '<title>', '<svg>', '<select>', '</html>', '<body>', ' ', 'text', '<!-- <frame src=c> -->',
  '<frame src=', '"', '<plaintext>', '<frameset/>'];
/** Documents with a head-ish prefix and a <frameset>: exercises the frameset path and its guard. */
export const framesetDoc = fc
  .tuple(
    fc.array(fc.constantFrom(...HEADISH), { maxLength: 6 }),
    fc.constantFrom('<frameset>', '<FRAMESET cols="50%,*">', '<frameset/>'),
    fc.array(fc.oneof(fc.constantFrom(...FRAMESET_BODY), linkTag), { maxLength: 12 }),
  )
  .map(([h, f, b]) => h.join('') + f + b.join(''));
