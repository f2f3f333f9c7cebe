"""The preview tests of test_preview.py against a Docker container of the runtime image (its own
module: the ASan pass of .ci/run leaves the Docker provider's tests to the release pass)."""
import unittest

from test_preview import Previews


class DockerPreviews(Previews, unittest.TestCase):
    PROVIDER = "docker"


if __name__ == "__main__":
    unittest.main()
