"""The sandbox worker: runs accepted label functions, one JSON job a line on stdin, one JSON verdict a line out.

Started by :mod:`gui_envs.verifiers.sandbox` as ``python -I -S _worker.py <memory bytes>`` with an empty
environment. It loads ``api.py`` beside it by path (the interpreter's module path is not trusted; ``api.py``
loads the answer judge, ``gui_envs/tasks/judging.py``, by path the same way), then, before
reading any job, limits itself: address space (memory), no file may grow (``RLIMIT_FSIZE = 0``: no file
writes), no new processes, and no new file descriptors (so no sockets and no ``open``). Only JSON crosses the
pipe back, never pickle, so a worker that was subverted still cannot run code in the host. The host may send a
batch of any size: it reads the verdicts while it writes, so a blocking write of a verdict here always ends.
"""

import importlib.util
import json
import os
import resource
import sys


def _load_api():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api.py")
    spec = importlib.util.spec_from_file_location("_guigym_label_api", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolves annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _limit(memory_bytes):
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (ValueError, OSError):
        pass
    # Every descriptor it needs (stdin, stdout, stderr) is open; the lowest free number is already at the limit.
    fds = 3
    resource.setrlimit(resource.RLIMIT_NOFILE, (fds, fds))


def main():
    memory = int(sys.argv[1])
    api = _load_api()
    module = type(sys)("Function_APIs")
    for name, fn in api.API.items():
        setattr(module, name, fn)
    module.__all__ = list(api.API)

    def restricted_import(name, globals=None, locals=None, fromlist=(), level=0):
        if name != "Function_APIs" or level != 0:
            raise ImportError(f"only Function_APIs can be imported, not {name!r}")
        return module

    stdin, stdout = sys.stdin, sys.stdout
    os.environ.clear()
    _limit(memory)
    views = {}
    for line in stdin:
        job = json.loads(line)
        if "view" in job:
            views[job["key"]] = api.TrajectoryView.from_json(job["view"])
            continue
        if "forget" in job:
            views.clear()
            continue
        out = {"id": job["id"]}
        try:
            view = views[job["key"]]
            code = compile(job["code"], "<label function>", "exec")
            namespace = {
                "__builtins__": {"__import__": restricted_import, "True": True, "False": False, "None": None},
                "trajectory": view,
                "stop_page_url": view.stop_page_url,
            }
            api.start_log()
            exec(code, namespace)
            result = namespace.get("result")
            if not isinstance(result, bool):
                out["crash"] = f"result is {type(result).__name__}, not a bool"
            else:
                out["passed"] = result
                out["log"] = [[n, p, list(s)] for n, p, s in api.CALL_LOG]
        except MemoryError:
            out["crash"] = "MemoryError: the memory limit was reached"
        except RecursionError:
            out["crash"] = "RecursionError"
        except BaseException as exc:  # a label function's failure is a verdict, never the worker's end
            out["crash"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        stdout.write(json.dumps(out) + "\n")
        stdout.flush()


if __name__ == "__main__":
    main()
