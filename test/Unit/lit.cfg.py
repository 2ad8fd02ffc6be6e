# lit configuration that runs the GoogleTest unit tests.
import os

import lit.formats

config.name = "FRENZY-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.frenzy_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
