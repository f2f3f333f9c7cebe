"""browse / browse_interactive through the executor: a real headless Chromium driven over the
DevTools pipe by sandpipe-browser, against a test server the sandbox's bash starts. Observations
have upstream's 16 extras and texts. One executor (one browser) for the class, a bwrap sandbox."""
import base64
import os
import re
import unittest

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


if __name__ == "__main__":
    unittest.main()
