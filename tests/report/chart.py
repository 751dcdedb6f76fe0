#!/usr/bin/env python3
"""tests/report/chart.py inject PAGE OUT | verdict DOM METRICS NAMES

The charts of `gpushare replay --html/--svg` as headless Chromium lays
them out (tests/report/chart.sh).

inject: a copy of the page (HTML, its Content-Security-Policy taken out)
or of the picture (SVG) with a script at its end that measures every chart
(`.chart`: an inline <svg> of the page, a <g> of the picture) and the
legend (`.legend [data-series]`) and writes what it found as JSON into
#chart-result (a <pre> in a page, a <desc> in a picture), for
`chromium --dump-dom`:
  legend: each key's name, colour and box; keys that overlap, or stick out
    of the page's window (the picture's own box for an SVG document);
  per chart: its metric, the curves (one per legend key, each of at least
    two points, its colour the key's, inside the plot frame), the tick
    labels of each axis (at least three, numbers rising, none on another),
    the title and the axis labels; any text outside the chart's box or on
    another text.
verdict: read the dumped DOM; METRICS is the charts' metrics in order
("alloc,frag,stranded,pending"), NAMES a file of the legend's names, one
a line, as they must read; print the findings, exit 1 on any.
"""
import json
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree for the import below
from layout import read_result  # noqa: E402

SCRIPT = r"""
(function () {
  var doc = document, root = doc.documentElement, svgDoc = root.tagName.toLowerCase() === 'svg';
  var res = {legend: [], charts: [], problems: []};
  function bad(s) { res.problems.push(s); }
  function box(e) { var r = e.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; }
  function inside(a, b, tol) { return a.l >= b.l - tol && a.r <= b.r + tol && a.t >= b.t - tol && a.b <= b.b + tol; }
  function overlap(a, b) { return a.l < b.r - 0.5 && b.l < a.r - 0.5 && a.t < b.b - 0.5 && b.t < a.b - 0.5; }
  function fmt(b) { return Math.round(b.l) + '..' + Math.round(b.r) + 'x' + Math.round(b.t) + '..' + Math.round(b.b); }
  var win = svgDoc ? box(root) : {l: 0, r: doc.documentElement.clientWidth, t: -1e9, b: 1e9};
  var keys = doc.querySelectorAll('.legend [data-series]'), colour = {}, kb = [];
  for (var i = 0; i < keys.length; i++) {
    var k = keys[i], label = k.querySelector('text, .clip'), sw = k.querySelector('line, .swatch');
    var name = label ? label.textContent : '', s = k.getAttribute('data-series');
    var c = sw ? (sw.tagName.toLowerCase() === 'line' ? getComputedStyle(sw).stroke : getComputedStyle(sw).borderTopColor) : '';
    colour[s] = c;
    var b = box(label || k);
    res.legend.push({series: s, name: name, colour: c});
    if (!name.trim()) bad('legend: key ' + s + ' has no name');
    if (!inside(b, win, 0.5)) bad('legend: key ' + s + ' (' + name.slice(0, 40) + ') sticks out: ' + fmt(b) + ' of ' + fmt(win));
    for (var j = 0; j < kb.length; j++)
      if (overlap(b, kb[j].b)) bad('legend: keys ' + kb[j].s + ' and ' + s + ' overlap');
    kb.push({s: s, b: b});
  }
  var charts = doc.querySelectorAll('.chart');
  for (var n = 0; n < charts.length; n++) {
    var ch = charts[n], m = ch.getAttribute('data-metric') || '?', info = {metric: m, curves: 0, xticks: [], yticks: []};
    res.charts.push(info);
    var bg = ch.querySelector('.bg'), frame = ch.querySelector('.frame');
    if (!bg || !frame) { bad(m + ': no background or no plot frame'); continue; }
    var cb = box(bg), fb = box(frame);
    if (!inside(cb, win, 0.5)) bad(m + ': the chart sticks out: ' + fmt(cb) + ' of ' + fmt(win));
    var curves = ch.querySelectorAll('.curve'), seen = {};
    info.curves = curves.length;
    if (curves.length !== keys.length) bad(m + ': ' + curves.length + ' curves for ' + keys.length + ' legend keys');
    for (var c2 = 0; c2 < curves.length; c2++) {
      var cv = curves[c2], sid = cv.getAttribute('data-series');
      if (seen[sid]) bad(m + ': two curves of series ' + sid);
      seen[sid] = 1;
      if (!(sid in colour)) bad(m + ': curve of series ' + sid + ' has no legend key');
      else if (getComputedStyle(cv).stroke !== colour[sid]) bad(m + ': curve ' + sid + ' is ' + getComputedStyle(cv).stroke + ', its key ' + colour[sid]);
      if (cv.tagName.toLowerCase() === 'polyline' && cv.points.numberOfItems < 2) bad(m + ': curve ' + sid + ' has ' + cv.points.numberOfItems + ' points');
      var vb = box(cv);
      if (!inside(vb, fb, 1)) bad(m + ': curve ' + sid + ' leaves the plot: ' + fmt(vb) + ' of ' + fmt(fb));
    }
    var texts = ch.querySelectorAll('text'), tb = [];
    for (var t = 0; t < texts.length; t++) {
      var te = texts[t], b2 = box(te), cls = te.getAttribute('class') || '';
      if (!te.textContent.trim()) bad(m + ': an empty text (' + cls + ')');
      if (!inside(b2, cb, 0.5)) bad(m + ': text "' + te.textContent.slice(0, 40) + '" sticks out of the chart: ' + fmt(b2) + ' of ' + fmt(cb));
      for (var u = 0; u < tb.length; u++)
        if (overlap(b2, tb[u].b)) bad(m + ': texts "' + tb[u].s + '" and "' + te.textContent.slice(0, 40) + '" overlap');
      tb.push({s: te.textContent.slice(0, 40), b: b2});
      if (cls === 'xt') info.xticks.push(parseFloat(te.textContent));
      if (cls === 'yt') info.yticks.push(parseFloat(te.textContent));
    }
    if (!ch.querySelector('.ct') || !ch.querySelector('.ct').textContent.trim()) bad(m + ': no title');
    if (ch.querySelectorAll('.axis').length !== 2) bad(m + ': ' + ch.querySelectorAll('.axis').length + ' axis labels, want 2');
    [['x', info.xticks], ['y', info.yticks]].forEach(function (a) {
      if (a[1].length < 3) bad(m + ': ' + a[1].length + ' ' + a[0] + ' ticks');
      for (var q = 1; q < a[1].length; q++)
        if (!(a[1][q] > a[1][q - 1])) bad(m + ': ' + a[0] + ' ticks not rising: ' + a[1].join(' '));
    });
  }
  var out = svgDoc ? doc.createElementNS('http://www.w3.org/2000/svg', 'desc') : doc.createElement('pre');
  out.setAttribute('id', 'chart-result');
  out.textContent = JSON.stringify(res);
  (svgDoc ? root : doc.body).appendChild(out);
})();
"""


def inject(page, out):
    with open(page, encoding="utf-8") as f:
        text = f.read()
    if page.endswith(".svg"):
        end = text.rfind("</svg>")
        if end < 0:
            sys.exit("chart.py: no </svg> in " + page)
        text = text[:end] + "<script><![CDATA[" + SCRIPT + "]]></script>\n" + text[end:]
    else:
        text = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n?', "", text)
        if "</body>" not in text:
            sys.exit("chart.py: no </body> in " + page)
        text = text.replace("</body>", "<script>" + SCRIPT + "</script>\n</body>", 1)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


def verdict(dom, metrics, names_file):
    r = read_result(dom, "chart-result", "pre|desc")
    if r is None:
        print("no chart result in the DOM: the check did not run")
        return 1
    with open(names_file, encoding="utf-8") as f:
        names = f.read().split("\n")[:-1]
    bad = list(r["problems"])
    got = [c["metric"] for c in r["charts"]]
    if got != metrics.split(","):
        bad.append("charts %s, want %s" % (",".join(got), metrics))
    legend = [k["name"] for k in r["legend"]]
    if legend != names:
        bad.append("legend %s, want %s" % (json.dumps(legend), json.dumps(names)))
    for b in bad[:20]:
        print(b)
    if len(bad) > 20:
        print("%d more" % (len(bad) - 20))
    if not bad:
        print("charts %s, %d curves each, legend of %d, nothing sticks out or overlaps"
              % (",".join(got), len(names), len(names)))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "inject":
        inject(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "verdict":
        sys.exit(verdict(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)
