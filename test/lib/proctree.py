"""Processes below a pid, read from /proc (test helper module).

mpirun's ranks may sit in their own process groups, so the kill tests find
them through parent links instead of killing a group.
"""
import os


def children_map():
    """ppid -> [pid] for every process now running."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    return children


def children(pid):
    return children_map().get(pid, [])


def descendants(pid):
    tree, out, todo = children_map(), [], [pid]
    while todo:
        for c in tree.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out
