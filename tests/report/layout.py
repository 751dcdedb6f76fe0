#!/usr/bin/env python3
"""tests/report/layout.py inject PAGE OUT | verdict DOM

inject: a copy of the report page for the layout check, with its
Content-Security-Policy taken out (it forbids every script) and a script at
the end of the body that measures the page as laid out and writes what it
found into <pre id="layout-result"> as JSON, for `chromium --dump-dom`:
  overflow: boxes whose content is wider than they are (scrollWidth >
    clientWidth), unless they are meant to scroll (overflow-x auto/scroll)
    or to cut their text with an ellipsis (overflow-x hidden and
    text-overflow ellipsis: the whole text is in the title attribute);
    not the shapes and texts inside an inline <svg>, which are no CSS
    boxes (tests/report/chart.py checks a chart's);
  outside: boxes that stick out of the window at either side;
  pageWidth/viewport: the document wider than the window scrolls sideways;
  summaryTop/viewportHeight: where the summary starts;
  midword: names in the pod table broken onto two lines at a place that is
    not after - / _ = (the page offers breaks only there).
verdict: read the dumped DOM, print the findings, exit 1 on any.
"""
import json
import re
import sys

SCRIPT = r"""
<script>
(function () {
  var vw = document.documentElement.clientWidth, res = {overflow: [], outside: [], midword: []};
  function path(e) {
    var s = e.tagName.toLowerCase();
    if (e.id) s += '#' + e.id;
    if (e.className && typeof e.className === 'string') s += '.' + e.className.trim().split(/\s+/).join('.');
    var d = e.getAttribute('data-node') || e.getAttribute('data-card') || e.getAttribute('data-pod');
    if (d) s += '[' + d + ']';
    return s;
  }
  var all = document.body.querySelectorAll('*');
  for (var i = 0; i < all.length; i++) {
    var e = all[i];
    if (e.id === 'layout-result' || e.tagName === 'SCRIPT') continue;
    var cs = getComputedStyle(e), r = e.getBoundingClientRect();
    if (cs.display === 'none' || (r.width === 0 && r.height === 0)) continue;
    var scrolls = cs.overflowX === 'auto' || cs.overflowX === 'scroll';
    var clips = cs.overflowX === 'hidden' && cs.textOverflow === 'ellipsis';
    // inside an inline <svg>, clientWidth and scrollWidth measure no CSS box
    // (a rotated <text> reads as overflowing): chart.py checks what is drawn there
    var drawn = e instanceof SVGElement && !(e instanceof SVGSVGElement);
    if (!drawn && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1 && !scrolls && !clips) {
      e.setAttribute('data-overflow', 'box');
      res.overflow.push(path(e) + ' ' + e.scrollWidth + '>' + e.clientWidth);
    }
    if (r.right > vw + 0.5 || r.left < -0.5) {
      e.setAttribute('data-overflow', 'window');
      res.outside.push(path(e) + ' ' + Math.round(r.left) + '..' + Math.round(r.right));
    }
  }
  var cells = document.querySelectorAll('#pods td.nm, #headroom td.nm');
  for (var c = 0; c < cells.length; c++) {
    var text = cells[c].textContent, walker = document.createTreeWalker(cells[c], NodeFilter.SHOW_TEXT), n, prev = null, pc = '';
    while ((n = walker.nextNode())) {
      for (var k = 0; k < n.data.length; k++) {
        var rg = document.createRange(); rg.setStart(n, k); rg.setEnd(n, k + 1);
        var rects = rg.getClientRects();
        if (!rects.length) continue;
        var top = rects[0].top;
        if (prev !== null && top > prev + 2 && '-/_= '.indexOf(pc) < 0)
          res.midword.push(text + ' broken after "' + pc + '"');
        prev = top; pc = n.data[k];
      }
    }
  }
  res.pageWidth = document.documentElement.scrollWidth;
  res.viewport = vw;
  res.viewportHeight = window.innerHeight;
  var s = document.getElementById('summary');
  res.summaryTop = s ? Math.round(s.getBoundingClientRect().top) : -1;
  var out = document.createElement('pre');
  out.id = 'layout-result';
  out.textContent = JSON.stringify(res);
  document.body.appendChild(out);
})();
</script>
"""


def inject(page, out):
    with open(page, encoding="utf-8") as f:
        html = f.read()
    html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n?', "", html)
    if "</body>" not in html:
        sys.exit("layout.py: no </body> in " + page)
    html = html.replace("</body>", SCRIPT + "</body>", 1)
    with open(out, "w", encoding="utf-8") as f:
        f.write(html)


def read_result(dom, ident, tags="pre"):
    """The JSON an injected script wrote into the element of id `ident` (one of
    `tags`, a regex) of a dumped DOM; None when it is not there."""
    with open(dom, encoding="utf-8") as f:
        m = re.search(r'<(%s) id="%s">(.*?)</\1>' % (tags, ident), f.read(), re.S)
    if not m:
        return None
    raw = m.group(2).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    return json.loads(raw)


def verdict(dom):
    r = read_result(dom, "layout-result")
    if r is None:
        print("no layout result in the DOM: the check did not run")
        return 1
    bad = []
    if r["pageWidth"] > r["viewport"]:
        bad.append("page %dpx wide in a %dpx window" % (r["pageWidth"], r["viewport"]))
    for what in ("overflow", "outside", "midword"):
        for x in r[what][:10]:
            bad.append("%s: %s" % (what, x))
        if len(r[what]) > 10:
            bad.append("%s: %d more" % (what, len(r[what]) - 10))
    if r["summaryTop"] < 0:
        bad.append("no #summary")
    elif r["summaryTop"] >= r["viewportHeight"]:
        bad.append("summary starts at %dpx, below the first %dpx" % (r["summaryTop"], r["viewportHeight"]))
    for b in bad:
        print(b)
    if not bad:
        print("fits: page %dpx in %dpx, summary at %dpx of %dpx" % (r["pageWidth"], r["viewport"], r["summaryTop"], r["viewportHeight"]))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "inject":
        inject(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "verdict":
        sys.exit(verdict(sys.argv[2]))
    else:
        sys.exit(__doc__)
