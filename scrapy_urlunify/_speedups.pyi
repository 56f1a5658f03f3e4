from array import array

# the compiled short path of Unifier._compute (core/unify.py)
class PlainPath:
    def __init__(
        self,
        hosts: dict[str, tuple[object, ...]],
        path_chars: str,
        query_chars: str,
        fragment_chars: str,
        index_pages: frozenset[str],
        ident_head: str | None,
        prefix_text: str,
        take_steps: object,
        result_type: type[tuple[object, ...]],
        fields: tuple[int, int, int],
    ) -> None: ...
    def __call__(self, url: str, /) -> object: ...

def ordered_add(table: array[int], fp: int, n: int, shift_in: int, shift_out: int, /) -> int: ...
def ordered_contains(table: array[int], fp: int, n: int, shift_in: int, shift_out: int, /) -> bool: ...
def ordered_rehash(old: array[int], new: array[int], n: int, shift_in: int, shift_out: int, /) -> int: ...
