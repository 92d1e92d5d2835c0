import subprocess
import sys


def test_scoring_imports_no_torch_or_image_code():
    code = (
        "import importlib, pkgutil, sys\n"
        "import crsbench_lib.scoring as s\n"
        "for m in pkgutil.iter_modules(s.__path__):\n"
        "    importlib.import_module(f'crsbench_lib.scoring.{m.name}')\n"
        "bad = sorted(n for n in ('torch', 'skimage', 'PIL') if n in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"scoring imported {out.stdout.strip()}"
