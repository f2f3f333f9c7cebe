"""browse / browse_interactive through the executor: a real headless Chromium driven over the
DevTools pipe by sandpipe-browser, against a test server the sandbox's bash starts. Observations
have upstream's 16 extras and texts. One executor (one browser) for the class, a bwrap sandbox."""
import base64
import os
import re
import struct
import unittest
import zlib

from spexec import ExecutorTest

SITE = {
    "index.html": "<html><head><title>Home</title></head><body><h1>Hello sandbox</h1>"
                  "<p>Some <b>bold</b> text.</p><a href='/next.html'>Next page</a>"
                  "<form action='/result.html' method='get'><input name='q' placeholder='query'>"
                  "<button type='submit'>Go</button></form></body></html>",
    "next.html": "<html><head><title>Next</title></head><body><h1>Second page</h1></body></html>",
    "result.html": "<html><head><title>Result</title></head><body><h1>Result</h1><p id='o'></p>"
                   "<script>document.getElementById('o').textContent = 'q=' + "
                   "new URLSearchParams(location.search).get('q')</script></body></html>",
}
EXTRAS = {"url", "trigger_by_action", "screenshot", "screenshot_path", "set_of_marks", "error",
          "goal_image_urls", "open_pages_urls", "active_page_index", "dom_object", "axtree_object",
          "extra_element_properties", "last_browser_action", "last_browser_action_error",
          "focused_element_bid", "filter_visible_only"}
PORT = 8931


def png_encode(w, h, rgb):
    """A w x h PNG of one colour (8-bit RGB)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\0" + bytes(rgb) * w for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def pdf_black_square():
    """A one-page PDF (200 x 200 pt) filled black."""
    stream = b"0 0 0 rg 0 0 200 200 re f"
    objs = [b"<</Type/Catalog/Pages 2 0 R>>", b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
            b"<</Type/Page/MediaBox[0 0 200 200]/Parent 2 0 R/Contents 4 0 R>>",
            b"<</Length %d>>stream\n" % len(stream) + stream + b"\nendstream"]
    out, offsets = b"%PDF-1.4\n", []
    for i, o in enumerate(objs):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)


def png_pixels(png):
    """The (r, g, b) pixels of an 8-bit RGB or RGBA PNG (a screenshot), row after row."""
    pos, idat, w = 8, b"", 0
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        data = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, _, depth, ctype = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + n
    raw, stride, prev, out = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(len(raw) // (stride + 1)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend(tuple(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return out


class BrowserTest(ExecutorTest):
    executor_args = {"bwrap": True}
    connection = "class"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        site = os.path.join(cls.ex.workspace, "site")
        os.makedirs(site)
        for name, html in SITE.items():
            with open(os.path.join(site, name), "w") as f:
                f.write(html)
        cls.c.run(f"cd /workspace/site && (python3 -m http.server {PORT} --bind 127.0.0.1 >/dev/null 2>&1 &) && cd /workspace")
        cls.c.run(f"for i in $(seq 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {PORT}))' 2>/dev/null && break; sleep 0.1; done")

    def act(self, action, **args):
        return self.c.action({"action": action, "args": args}, 120)

    def bid(self, obs, role, name):
        m = re.search(r"\[(\w+)\] " + role + " '" + re.escape(name) + "'", obs["content"])
        self.assertIsNotNone(m, obs["content"])
        return m.group(1)

    def test_browse_reads_text_and_screenshot(self):
        url = f"http://127.0.0.1:{PORT}/"
        obs = self.act("browse", url=url)
        self.assertEqual(obs["observation"], "browse")
        self.assertEqual(obs["message"], "Visited " + url)
        self.assertEqual(set(obs["extras"]), EXTRAS)
        x = obs["extras"]
        self.assertEqual(x["last_browser_action"], f'goto("{url}")')
        self.assertEqual(x["open_pages_urls"], [url])
        self.assertFalse(x["error"])
        self.assertTrue(obs["content"].startswith(f"[Current URL: {url}]\n"
                                                  "============== BEGIN webpage content ==============\n# Hello sandbox"))
        self.assertIn("Some **bold** text.", obs["content"])
        self.assertIn("[Next page](/next.html)", obs["content"])
        png = base64.b64decode(x["screenshot"].split(",", 1)[1])
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertTrue(x["screenshot_path"].startswith("/workspace/.browser_screenshots/screenshot_"))
        self.assertTrue(os.path.exists(os.path.join(self.ex.workspace, x["screenshot_path"][len("/workspace/"):])))

    def test_click_fill_submit_and_back(self):
        obs = self.act("browse_interactive", browser_actions=f'goto("http://127.0.0.1:{PORT}/")')
        self.assertIn("[Action executed successfully.]", obs["content"])
        link = self.bid(obs, "link", "Next page")
        obs = self.act("browse_interactive", browser_actions=f'click("{link}")')
        self.assertEqual(obs["extras"]["url"], f"http://127.0.0.1:{PORT}/next.html")
        self.assertIn("heading 'Second page'", obs["content"])
        obs = self.act("browse_interactive", browser_actions="go_back()")
        self.assertEqual(obs["extras"]["url"], f"http://127.0.0.1:{PORT}/")
        box = self.bid(obs, "textbox", "query")
        obs = self.act("browse_interactive", browser_actions=f'fill("{box}", "sandpipe")\npress("{box}", "Enter")')
        self.assertEqual(obs["extras"]["url"], f"http://127.0.0.1:{PORT}/result.html?q=sandpipe")
        self.assertIn("StaticText 'q=sandpipe'", obs["content"])

    def test_listing_is_chromiums_accessibility_tree(self):
        """The listing is Chromium's tree (Accessibility.getFullAXTree) as BrowserGym flattens it,
        with bids that click/fill resolve to the same elements."""
        obs = self.act("browse_interactive", browser_actions=f'goto("http://127.0.0.1:{PORT}/")')
        tree = obs["content"].split("== BEGIN accessibility tree ==============\n")[1].split(
            "\n============== END")[0]
        shape = [re.sub(r"^(\t*)\[\d+\] ", r"\1[N] ", l) for l in tree.split("\n")
                 if l.strip() != "generic"]  # the input's inner editor, as this Chromium has it
        self.assertEqual(shape, [
            f"RootWebArea 'Home', focused, url='http://127.0.0.1:{PORT}/'",
            "\t[N] heading 'Hello sandbox'",
            "\t[N] paragraph ''",
            "\t\tStaticText 'Some'",
            "\t\tStaticText 'bold'",
            "\t\tStaticText 'text.'",
            f"\t[N] link 'Next page', clickable, url='http://127.0.0.1:{PORT}/next.html'",
            "\t[N] form ''",
            "\t\t[N] textbox 'query', clickable",
            "\t\t[N] button 'Go', clickable"])
        # the bid the tree shows is the element's browsergym_id: fill reaches it, and the tree
        # shows the new value and focus from Chromium's side
        box = self.bid(obs, "textbox", "query")
        obs = self.act("browse_interactive", browser_actions=f'fill("{box}", "it\'s")')
        self.assertIn(f"[{box}] textbox 'query' value=\"it's\", clickable, focused", obs["content"])
        self.assertEqual(obs["extras"]["focused_element_bid"], box)

    def test_errors_are_reported(self):
        obs = self.act("browse_interactive", browser_actions='click("nope")')
        self.assertTrue(obs["extras"]["error"])
        self.assertIn('Could not find element with bid "nope"', obs["content"])
        obs = self.act("browse", url="http://192.0.2.1:9/")  # no network in the sandbox
        self.assertTrue(obs["extras"]["error"])
        self.assertIn("The browser sees what the sandbox sees", obs["extras"]["last_browser_action_error"])
        obs = self.act("browse_interactive", browser_actions='click(')
        self.assertTrue(obs["extras"]["error"])


class FileViewerTest(ExecutorTest):
    """OpenHands' file viewer inside the sandbox: the executor writes /tmp/oh-server-url, and
    the agent's browser opens {url}/view?path=… (answered by the browser itself: the sandbox
    has no network, and nothing listens on that port)."""
    executor_args = {"bwrap": True}
    connection = "class"

    def goto(self, url):
        return self.c.action({"action": "browse_interactive",
                              "args": {"browser_actions": f'goto("{url}")'}}, 120)

    def server_url(self):
        _, obs = self.c.run("cat /tmp/oh-server-url")
        self.assertEqual(obs["extras"]["metadata"]["exit_code"], 0, obs)
        return obs["content"].strip()

    def test_server_url_is_written_at_start(self):
        self.assertEqual(self.server_url(), "http://localhost:30001")

    def test_png_is_shown(self):
        with open(os.path.join(self.ex.workspace, "red.png"), "wb") as f:
            f.write(png_encode(120, 80, (255, 0, 0)))
        obs = self.goto(self.server_url() + "/view?path=/workspace/red.png")
        self.assertFalse(obs["extras"]["error"], obs["content"])
        self.assertIn("[Action executed successfully.]", obs["content"])
        self.assertIn("RootWebArea 'File Viewer - red.png'", obs["content"])
        self.assertIn("image 'red.png'", obs["content"])
        # the image's own bytes rendered: 120 x 80 red pixels in the screenshot
        shot = png_pixels(base64.b64decode(obs["extras"]["screenshot"].split(",", 1)[1]))
        self.assertGreaterEqual(shot.count((255, 0, 0)), 120 * 80)

    def test_pdf_is_shown(self):
        """Chromium's own PDF viewer draws it (upstream's page loads pdf.js from a CDN, which a
        sandbox without network cannot reach): a black square page shows black pixels."""
        with open(os.path.join(self.ex.workspace, "doc.pdf"), "wb") as f:
            f.write(pdf_black_square())
        obs = self.goto("http://127.0.0.1:30001/view?path=%2Fworkspace%2Fdoc.pdf")
        self.assertFalse(obs["extras"]["error"], obs["content"])
        self.assertIn("RootWebArea 'File Viewer - doc.pdf'", obs["content"])
        self.assertIn("EmbeddedObject 'doc.pdf'", obs["content"])
        black = 0
        for _ in range(60):  # the viewer draws after the load event: look again until it has
            shot = png_pixels(base64.b64decode(obs["extras"]["screenshot"].split(",", 1)[1]))
            black = shot.count((0, 0, 0))
            if black >= 150 * 150:
                break
            obs = self.c.action({"action": "browse_interactive", "args": {"browser_actions": "noop(500)"}}, 120)
        self.assertGreaterEqual(black, 150 * 150)

    def test_errors_as_upstream(self):
        os.makedirs(os.path.join(self.ex.workspace, "adir"), exist_ok=True)
        with open(os.path.join(self.ex.workspace, "notes.txt"), "w") as f:
            f.write("text")
        url = self.server_url()
        for path, words in [("workspace/red.png", "Error: Path must be absolute"),
                            ("/workspace/missing.png", "Error: File not found"),
                            ("/workspace/adir", "Error: Path is a directory"),
                            ("/workspace/notes.txt", "Unsupported file extension: .txt")]:
            obs = self.goto(f"{url}/view?path={path}")
            self.assertIn(words, obs["content"], path)
            self.assertIn(path, obs["content"])
        obs = self.goto(url + "/")
        self.assertIn("File viewer server is running", obs["content"])


if __name__ == "__main__":
    unittest.main()
