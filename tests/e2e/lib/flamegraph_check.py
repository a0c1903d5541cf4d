#!/usr/bin/env python3
"""Independent checks of trc2flamegraph's SVG (tests/e2e/conv_flamegraph.sh).

  widths COLLAPSED SVG WIDTH MIN_WIDTH [icicle]
      Builds the flame graph flamegraph.pl would draw from trc2collapsed's
      folded lines (one tree, children sorted by name, a frame's width its
      value times (WIDTH - 20) / total, frames under MIN_WIDTH px left out
      with everything above them) and compares it with the SVG's frames:
      the same (depth, name, x, width) set, to the printed 0.01 px.
  wrap SVG HTML NAME REGEX
      An HTML page that embeds the SVG and then, as a person would, clicks
      the frame named NAME and searches REGEX, recording the page's state
      in <pre id="result"> for `chromium --dump-dom`.
  diff COLLAPSED BASE_COLLAPSED SVG
      Each frame of a --diff graph (default width) coloured by the sign of
      the change of its share of the total between the two folded files:
      red where it grew, blue where it shrank, grey where it did not.
  standalone SVG OUT NAME
      The SVG itself, as a browser opens the file, with one more script
      at its end that zooms into NAME through the viewer's API and marks
      the outcome on the root element (data-check), for --dump-dom.
  browser DOM COLLAPSED NAME REGEX WIDTH
      Checks that state: the click zoomed into NAME (its frame now spans
      the whole width; frames outside its subtree hidden, its ancestors
      faded), the search highlighted exactly the frames matching REGEX and
      reported their share of the zoomed frame's samples (all of them
      when an ancestor matches, as flamegraph.pl counts it) and, beside
      it, of the whole graph's, both computed here from the folded lines.
"""
import html
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
XPAD, FRAME_H, YPAD_TOP, YPAD_BOTTOM = 10, 16, 36, 34


def unescape(name):
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name)


def shown(name):
    """As the SVG shows a name: control characters become U+FFFD (XML cannot carry them)."""
    return re.sub(r"[\x00-\x1f\x7f]", "\ufffd", name)


def read_folded(path):
    lines = []
    for raw in open(path, encoding="utf-8"):
        stack, count = raw.rstrip("\n").rsplit(" ", 1)
        lines.append(([unescape(f) for f in stack.split(";")], int(count)))
    return lines


def tree(lines):
    root = {"name": "all", "value": 0, "kids": {}}
    for frames, v in lines:
        root["value"] += v
        node = root
        for f in frames:
            node = node["kids"].setdefault(f, {"name": f, "value": 0, "kids": {}})
            node["value"] += v
    return root


def expected_frames(lines, width, min_width):
    root = tree(lines)
    total = root["value"]
    scale = (width - 2 * XPAD) / total
    out = []

    def walk(node, depth, start):
        out.append((depth, shown(node["name"]), "%.2f" % (XPAD + start * scale), "%.2f" % (node["value"] * scale)))
        for name in sorted(node["kids"], key=lambda s: s.encode("utf-8")):
            kid = node["kids"][name]
            if kid["value"] * scale >= min_width:
                walk(kid, depth + 1, start)
            start += kid["value"]

    walk(root, 0, 0)
    return out


def shares(lines):
    """Share of the total under each path (a tuple of names)."""
    total = sum(v for _, v in lines)
    out = {}
    for frames, v in lines:
        for i in range(len(frames)):
            key = tuple(shown(f) for f in frames[:i + 1])
            out[key] = out.get(key, 0) + v / total
    return out


def places(lines, width):
    """(depth, name as shown, x as printed) -> the frame's path, in the
    layout flamegraph.pl draws (default orientation, WIDTH px)."""
    where = {}
    root = tree(lines)
    scale = (width - 2 * XPAD) / root["value"]

    def walk(node, path, start):
        for name in sorted(node["kids"], key=lambda s: s.encode("utf-8")):
            kid = node["kids"][name]
            p = path + (shown(name),)
            where[(len(p), shown(name), "%.2f" % (XPAD + start * scale))] = p
            walk(kid, p, start)
            start += kid["value"]

    walk(root, (), 0)
    return where


def check_diff(collapsed, base, svg):
    cur, old = shares(read_folded(collapsed)), shares(read_folded(base))
    lines = read_folded(collapsed)
    where = {}  # (depth, name, x) -> path, from the layout flamegraph.pl draws
    root = tree(lines)
    scale = 1180 / root["value"]

    def walk(node, path, start):
        for name in sorted(node["kids"], key=lambda s: s.encode("utf-8")):
            kid = node["kids"][name]
            p = path + (shown(name),)
            where[(len(p), shown(name), "%.2f" % (XPAD + start * scale))] = p
            walk(kid, p, start)
            start += kid["value"]

    walk(root, (), 0)
    doc = ET.parse(svg).getroot()
    counts = {"grew": 0, "shrank": 0, "same": 0}
    for g in doc.find(f".//{NS}g[@id='frames']").findall(f"{NS}g"):
        name = g.find(f"{NS}title").text.split("\n")[0]
        if name == "all":
            continue
        r = g.find(f"{NS}rect")
        depth = (float(doc.get("height")) - YPAD_BOTTOM - float(r.get("y"))) / FRAME_H - 1
        path = where[(int(depth), name, r.get("x"))]
        d = cur.get(path, 0) - old.get(path, 0)
        rgb = tuple(int(c) for c in re.findall(r"\d+", r.get("fill")))
        if abs(d) < 1e-12:
            kind = "same"
            assert rgb[0] == rgb[1] == rgb[2], (path, d, rgb)
        elif d > 0:
            kind = "grew"
            assert rgb[0] == 255 and rgb[1] == rgb[2] < 255, (path, d, rgb)
        else:
            kind = "shrank"
            assert rgb[2] == 255 and rgb[0] == rgb[1] < 255, (path, d, rgb)
        counts[kind] += 1
    print("diff colours follow the change of share:", counts)
    return counts


def svg_frames(path, icicle):
    doc = ET.parse(path).getroot()
    height = float(doc.get("height"))
    frames = doc.find(f".//{NS}g[@id='frames']")
    # a subtitle takes a line of its own above an icicle's root
    top = YPAD_TOP + (12 if doc.find(f".//{NS}text[@id='subtitle']") is not None else 0)
    out = []
    for g in frames.findall(f"{NS}g"):
        name = g.find(f"{NS}title").text.split("\n")[0]
        r = g.find(f"{NS}rect")
        y = float(r.get("y"))
        depth = (y - top) / FRAME_H if icicle else (height - YPAD_BOTTOM - y) / FRAME_H - 1
        assert depth == int(depth), (name, y)
        out.append((int(depth), name, r.get("x"), r.get("width")))
    return out


def check_widths(collapsed, svg, width, min_width, icicle=False):
    want = expected_frames(read_folded(collapsed), float(width), float(min_width))
    got = svg_frames(svg, icicle)
    if sorted(want) != sorted(got):
        missing = sorted(set(want) - set(got))[:5]
        extra = sorted(set(got) - set(want))[:5]
        sys.exit(f"frames differ: {len(want)} expected, {len(got)} drawn; "
                 f"missing {missing}; unexpected {extra}")
    if got != want:
        sys.exit("frames not in pre-order by name")
    print(f"{len(got)} frames match flamegraph.pl's layout")


SCRIPT = """
<pre id="result"></pre>
<script>
(function(){
  var out = {api: !!window.flamegraph};
  var gs = Array.prototype.slice.call(document.querySelectorAll('#frames > g'));
  function name(g){ return g.querySelector('title').textContent.split('\\n')[0]; }
  var target = gs.filter(function(g){ return name(g) === NAME; })[0];
  out.found = !!target;
  if (target) {
    out.before_x = target.querySelector('rect').getAttribute('x');
    out.before_y = +target.querySelector('rect').getAttribute('y');
    out.height = +document.querySelector('svg').getAttribute('height');
    target.querySelector('rect').dispatchEvent(new MouseEvent('click', {bubbles: true}));
    out.zoomed = window.flamegraph.zoomed();
    out.target_x = +target.querySelector('rect').getAttribute('x');
    out.target_w = +target.querySelector('rect').getAttribute('width');
    out.target_text = target.querySelector('text').textContent;
  }
  out.frames = gs.map(function(g){ return {name: name(g), cls: g.getAttribute('class'),
      x: +g.querySelector('rect').getAttribute('x'), w: +g.querySelector('rect').getAttribute('width'),
      y: +g.querySelector('rect').getAttribute('y')}; });
  out.unzoom_hidden = document.querySelector('#unzoom').classList.contains('hide');
  out.share = window.flamegraph.search(REGEX);
  out.matched = document.querySelector('#matched').textContent;
  out.share_all = +document.querySelector('#matched').getAttribute('data-share-all');
  out.highlighted = gs.filter(function(g){
      return g.querySelector('rect').getAttribute('fill') === 'rgb(230,0,230)'; }).map(name);
  document.getElementById('result').textContent = JSON.stringify(out);
})();
</script>
"""


def wrap(svg, out, name, regex):
    text = open(svg, encoding="utf-8").read()
    text = re.sub(r"^<\?xml[^>]*\?>\s*", "", text)
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n" + text +
            SCRIPT.replace("NAME", json.dumps(name)).replace("REGEX", json.dumps(regex)) +
            "</body></html>\n")
    open(out, "w", encoding="utf-8").write(page)


def standalone(svg, out, name):
    text = open(svg, encoding="utf-8").read()
    probe = ("<script><![CDATA[\nvar fg = window.flamegraph, ok = fg && fg.zoom(%s);\n"
             "document.documentElement.setAttribute('data-check', ok ? 'zoomed:' + fg.zoomed() : 'no viewer');\n"
             "]]></script>\n</svg>\n") % json.dumps(name)
    assert text.endswith("</svg>\n")
    open(out, "w", encoding="utf-8").write(text[:-len("</svg>\n")] + probe)


def check_browser(dom, collapsed, name, regex, width):
    m = re.search(r'<pre id="result">(.*?)</pre>', open(dom, encoding="utf-8").read(), re.S)
    assert m and m.group(1), "the page's script left no result"
    st = json.loads(html.unescape(m.group(1)))
    assert st["api"] and st["found"], st
    full = float(width) - 2 * XPAD
    # the click zoomed into NAME: it spans the whole width now
    assert st["zoomed"] == name, st["zoomed"]
    assert abs(st["target_x"] - XPAD) < 0.01 and abs(st["target_w"] - full) < 0.01, st
    assert not st["unzoom_hidden"], "Reset Zoom not shown after a zoom"
    assert st["target_text"].startswith(name[:10]), st["target_text"]
    lines = read_folded(collapsed)
    # the frames of NAME's subtree are shown, others hidden or faded
    t = [f for f in st["frames"] if f["name"] == name][0]
    for f in st["frames"]:
        cls = f["cls"] or ""
        if "parent" in cls:
            assert abs(f["w"] - full) < 0.01, ("a faded ancestor spans the width", f)
        if "hide" not in cls and "parent" not in cls and f is not t:
            assert f["x"] >= XPAD - 0.01 and f["x"] + f["w"] <= XPAD + full + 0.05, f
    assert any("hide" in (f["cls"] or "") for f in st["frames"]), "nothing hidden by the zoom"
    # search: every frame matching REGEX highlighted, no other
    rx = re.compile(regex)
    want = sorted(f["name"] for f in st["frames"] if f["name"] != "all" and rx.search(f["name"]))
    assert want and sorted(st["highlighted"]) == want, (want, st["highlighted"])
    # share of samples under a matching frame (nested matches once): of
    # the whole graph, and of the zoomed frame's samples
    def matching(frames):
        return any(rx.search(shown(f)) for f in frames)
    total = sum(v for _, v in lines)
    share_all = 100.0 * sum(v for frames, v in lines if matching(frames)) / total
    depth = int((st["height"] - YPAD_BOTTOM - st["before_y"]) / FRAME_H - 1)
    path = places(lines, float(width))[(depth, name, st["before_x"])]
    inside = [(frames, v) for frames, v in lines if tuple(map(shown, frames[:len(path)])) == path]
    share = 100.0 * sum(v for frames, v in inside if matching(frames)) / sum(v for _, v in inside)
    assert abs(st["share"] - share) < 0.05, ("share of the zoomed frame", st["share"], share)
    assert abs(st["share_all"] - share_all) < 0.05, ("share of all", st["share_all"], share_all)
    assert st["matched"] == "Matched: %.2f%% (of all: %.2f%%)" % (st["share"], st["share_all"]), \
        st["matched"]
    print(f"zoom into {name!r} and search {regex!r} ({share:.2f}% of it, {share_all:.2f}% of all)"
          " behave in the browser")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "widths":
        check_widths(args[0], args[1], args[2], args[3], len(args) > 4 and args[4] == "icicle")
    elif cmd == "wrap":
        wrap(*args)
    elif cmd == "standalone":
        standalone(*args)
    elif cmd == "diff":
        c = check_diff(*args[:3])
        if len(args) > 3 and args[3] == "both" and not (c["grew"] and c["shrank"]):
            sys.exit("expected frames that grew and frames that shrank")
    elif cmd == "browser":
        check_browser(*args)
    else:
        sys.exit("unknown command " + cmd)
