"""sandpipe_kernel: what sandpipe-jupyter runs in every kernel it starts (plugins/jupyter/main.c),
before the first cell, to take per-cell costs out of ipykernel that buy sandpipe nothing. Measured
on Debian 12's ipykernel 6.17 / IPython 8.5 (docs/benchmarks.md): a `1+1` cell cost the kernel
about 5 ms of CPU, of which these remove about 1.5 ms and most of the waiting:

- ipykernel sleeps 0.5 ms after every execute_request ("on rare occasions, the flush doesn't
  seem to make it to the clients"): the helper waits for the kernel's idle status on iopub,
  which comes after every output of the cell, so the sleep only delays the reply.
- sys.stdout/sys.stderr.flush() hands a job to the IOPub thread and waits for it even when
  nothing was written; ipykernel flushes both several times per cell. Here a flush with nothing
  buffered and nothing scheduled returns at once; any write still goes through the thread.
- The display formatter computes every MIME type (HTML, Markdown, LaTeX, SVG, ...) of each
  result; upstream's runtime (execute_server.py) keeps only text/plain and image/png, so only
  those are computed.

Every step checks that the attribute it touches exists: another ipykernel is left as it is.
"""


def tune(ip):
    kernel = getattr(ip, "kernel", None)
    if kernel is not None and hasattr(kernel, "_execute_sleep"):
        kernel._execute_sleep = 0
    formatter = getattr(ip, "display_formatter", None)
    if formatter is not None and hasattr(formatter, "active_types"):
        formatter.active_types = ["text/plain", "image/png"]
    try:
        from ipykernel.iostream import OutStream
    except ImportError:
        return
    original = OutStream.flush
    if getattr(original, "_sandpipe", False):
        return

    def flush(self):
        buf = getattr(self, "_buffer", None)
        if (buf is not None and not getattr(self, "_flush_pending", True)
                and not getattr(self, "_subprocess_flush_pending", True)
                and getattr(self, "echo", None) is None and buf.tell() == 0):
            return None
        return original(self)

    flush._sandpipe = True
    OutStream.flush = flush
