"""libstdc++'s ordering algorithms, step by step on Python lists: ``std::nth_element`` (introselect) and
``std::sort`` (introsort, then insertion sort), as OpenVINO's reference kernels call them (TopK's
``sort='none'``, NonMaxSuppression-5's result sort). Their results depend on the exact sequence of swaps, so
ir-run reproduces it rather than sorting another way. ``less(x, y)`` is the comparison the reference passes.
"""

from __future__ import annotations


def std_sort(a: list, less) -> None:
    """libstdc++'s ``std::sort``: introsort down to runs of 16, then one insertion sort."""
    n = len(a)
    if n < 2:
        return
    introsort(a, 0, n, 2 * (n.bit_length() - 1), less)
    if n > 16:
        insertion_sort(a, 0, 16, less)
        for i in range(16, n):  # __unguarded_insertion_sort (guarded here: an inconsistent comparison stops at 0)
            value, j = a[i], i
            while j > 0 and less(value, a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = value
    else:
        insertion_sort(a, 0, n, less)


def introsort(a: list, first: int, last: int, depth: int, less) -> None:
    while last - first > 16:
        if depth == 0:
            heap_select(a, first, last, last, less)
            while last - first > 1:  # std::__sort_heap
                last -= 1
                value = a[last]
                a[last] = a[first]
                adjust_heap(a, first, 0, last - first, value, less)
            return
        depth -= 1
        mid = first + (last - first) // 2
        move_median_to_first(a, first, first + 1, mid, last - 1, less)
        cut = unguarded_partition(a, first + 1, last, first, less)
        introsort(a, cut, last, depth, less)
        last = cut


def introselect(a: list, nth: int, less) -> None:
    """libstdc++'s ``std::__introselect`` on ``a`` (median-of-three pivot moved to the front, unguarded
    partition, heap-select fallback after 2*log2(n) rounds, insertion sort below 4 elements)."""
    first, last = 0, len(a)
    depth = 2 * (last - first).bit_length() - 2
    while last - first > 3:
        if depth == 0:
            heap_select(a, first, nth + 1, last, less)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        mid = first + (last - first) // 2
        move_median_to_first(a, first, first + 1, mid, last - 1, less)
        cut = unguarded_partition(a, first + 1, last, first, less)
        if cut <= nth:
            first = cut
        else:
            last = cut
    insertion_sort(a, first, last, less)


def move_median_to_first(a, result, x, y, z, less) -> None:
    if less(a[x], a[y]):
        if less(a[y], a[z]):
            a[result], a[y] = a[y], a[result]
        elif less(a[x], a[z]):
            a[result], a[z] = a[z], a[result]
        else:
            a[result], a[x] = a[x], a[result]
    elif less(a[x], a[z]):
        a[result], a[x] = a[x], a[result]
    elif less(a[y], a[z]):
        a[result], a[z] = a[z], a[result]
    else:
        a[result], a[y] = a[y], a[result]


def unguarded_partition(a, first, last, pivot, less) -> int:
    while True:
        while less(a[first], a[pivot]):
            first += 1
        last -= 1
        while less(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def insertion_sort(a, first, last, less) -> None:
    if first == last:
        return
    for i in range(first + 1, last):
        val = a[i]
        if less(val, a[first]):
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            j = i
            while less(val, a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = val


def heap_select(a, first, middle, last, less) -> None:
    make_heap(a, first, middle, less)
    for i in range(middle, last):
        if less(a[i], a[first]):
            value = a[i]
            a[i] = a[first]
            adjust_heap(a, first, 0, middle - first, value, less)


def make_heap(a, first, last, less) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        adjust_heap(a, first, parent, length, a[first + parent], less)
        if parent == 0:
            return
        parent -= 1


def adjust_heap(a, first, hole, length, value, less) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if less(a[first + child], a[first + child - 1]):
            child -= 1
        a[first + hole] = a[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        a[first + hole] = a[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2
    while hole > top and less(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def partial_sort(items, count: int, less) -> list:
    """The first ``count`` of ``items`` as libstdc++'s ``std::partial_sort`` leaves them (a heap select, then a
    heap sort), equal items included."""
    items = list(items)
    heap_select(items, 0, count, len(items), less)
    for last in range(count - 1, 0, -1):  # (std::__sort_heap: the heap's top to the back, one by one)
        value = items[last]
        items[last] = items[0]
        adjust_heap(items, 0, 0, last, value, less)
    return items[:count]
