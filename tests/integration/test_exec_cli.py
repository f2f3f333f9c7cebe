"""sandpipe-exec, the debug client a person uses from a shell, against a real executor."""
import os
import subprocess
import unittest

from spexec import MODE, ROOT, ExecutorTest

CLI = os.path.join(ROOT, "build", MODE, "sandpipe-exec")


class ExecCliTest(ExecutorTest):
    def cli(self, *args, stdin=None):
        return subprocess.run([CLI, "-s", self.ex.sock, *args], input=stdin, capture_output=True, timeout=60)

    def test_run_streams_output_and_exits_with_the_command_code(self):
        r = self.cli("run", "echo out; echo err >&2; exit 3")
        self.assertEqual(r.returncode, 3)
        self.assertIn(b"out", r.stdout)
        self.assertIn(b"err", r.stdout)  # a PTY: one stream, as the agent sees it

    def test_spawn_keeps_streams_apart(self):
        r = self.cli("spawn", "--", "sh", "-c", "echo o; echo e >&2; exit 4")
        self.assertEqual((r.returncode, r.stdout, r.stderr.strip().splitlines()[0]), (4, b"o\n", b"e"))

    def test_upload_download_round_trip(self):
        src = os.path.join(self.ex.tmp, "src.bin")
        dst = os.path.join(self.ex.tmp, "dst.bin")
        data = os.urandom(3 * 1024 * 1024 + 7)
        with open(src, "wb") as f:
            f.write(data)
        self.assertEqual(self.cli("upload", src, "copy.bin").returncode, 0)
        self.assertEqual(self.cli("download", "copy.bin", dst).returncode, 0)
        with open(dst, "rb") as f:
            self.assertEqual(f.read(), data)

    def test_health_and_usage_errors(self):
        r = self.cli("health")
        self.assertEqual(r.returncode, 0)
        self.assertIn(b'"alive":true', r.stdout.replace(b" ", b""))
        self.assertEqual(self.cli("no-such-command").returncode, 2)
        r = subprocess.run([CLI, "-s", "/nonexistent.sock", "health"], capture_output=True, timeout=10)
        self.assertEqual(r.returncode, 1)


if __name__ == "__main__":
    unittest.main()
