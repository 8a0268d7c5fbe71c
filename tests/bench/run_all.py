"""Run every benchmark and print each figure beside its floor: ``python tests/bench/run_all.py``.

Ratios, not absolute times: these machines are shared and noisy. Pass names
(``storage``, ``chat_view``, ``launch``...) to run only some.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for path in sorted(HERE.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if wanted and name not in wanted:
            continue
        print(f"== {name}", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
        sys.argv = [str(path)]  # a benchmark's own options are its defaults here
        module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
