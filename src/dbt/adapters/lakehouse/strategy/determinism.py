"""Find non-deterministic spellings in Spark SQL and in PySpark model code.

A key, predicate or model computed from the clock, a random generator or the person running
dbt gives other values on a retry: the rows match nothing and are inserted a second time.
``find_nondeterministic`` returns the first such spelling, or None. Pure Python, no Spark.

Spark SQL (keys, predicates, merge expressions, SQL models) is tokenized, skipping comments
(--, nested /* */); string literals ('...', "...", r'...') and backtick names are never
searched for function names. Refused:
  - a call, any case, with spaces or comments before "(": every function Spark 4.1 itself
    marks non-deterministic (rand, randn, random, randstr, uniform, uuid, shuffle,
    monotonically_increasing_id, spark_partition_id, input_file_name, input_file_block_start,
    input_file_block_length, reflect, java_method, try_reflect), the clock (current_timestamp,
    current_date, current_time, now, curdate, localtimestamp, unix_timestamp with no argument)
    and the user running dbt (current_user, session_user, user: a rerun by someone else would
    compute another key). A backtick name called is a call too (`rand`() calls rand).
  - the words Spark also reads as these functions without parentheses: current_timestamp,
    current_date, current_time, localtimestamp, current_user, session_user. Not after "." (a
    qualified column, t.current_date) nor after "as" (an alias). A lambda variable of one of
    these names is refused too (rename it). Bare ``user`` is not refused: it is a common
    column name, and a column of that name wins over the function.
  - a string literal that Spark reads as a moving date when it becomes a DATE or TIMESTAMP
    (date'today', timestamp'now', cast('yesterday' as date), d >= 'tomorrow'): the whole
    literal is now, today, yesterday or tomorrow, optionally followed by a time zone.
  - TABLESAMPLE, which samples other rows on every run.
A column named like one of the functions (uuid, rand, now) is not refused unless called.

Python model code is read with ``ast``, so comments are never seen and docstrings (any string
standing alone as a statement) are skipped. Calls are checked by their last name: the Spark
names above (F.rand(), F.current_timestamp(), F.unix_timestamp() without argument), and
datetime.now(), date.today(), utcnow(), time.time(), uuid.uuid4(), df.sample(),
randomSplit(), anything in a random, numpy.random or secrets module, getuser(). Every other
string literal is Spark SQL as far as PySpark may be concerned (spark.sql, F.expr,
selectExpr, filter) and is checked as SQL, with two differences: a string that is a single
name is a column name (F.col("current_date")) unless it is an argument of expr, selectExpr,
sql, filter or where, and a call needs its "(" right after the name (prose such as "the user
(root)" is more likely in a Python string than "user ()" in SQL).
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass

# Marked non-deterministic by Spark itself (the Nondeterministic trait; checked on 4.1.4).
SPARK_NONDETERMINISTIC = frozenset(
    {
        "rand",
        "randn",
        "random",
        "randstr",
        "uniform",
        "uuid",
        "shuffle",
        "monotonically_increasing_id",
        "spark_partition_id",
        "input_file_name",
        "input_file_block_start",
        "input_file_block_length",
        "reflect",
        "java_method",
        "try_reflect",
    }
)
# Fixed within one query, different on the next run.
CLOCK = frozenset(
    {
        "current_timestamp",
        "current_date",
        "current_time",
        "now",
        "curdate",
        "localtimestamp",
        "unix_timestamp",  # only without an argument: unix_timestamp(col) is deterministic
    }
)
# Different when another person (or service account) reruns the interval.
WHO_RUNS = frozenset({"current_user", "session_user", "user"})
SQL_CALLS = SPARK_NONDETERMINISTIC | CLOCK | WHO_RUNS
# Spelled without parentheses, Spark still calls the function (localtimestamp alone is a
# column reference in Spark 4.1, but a call in other dialects: refused all the same).
SQL_BARE = frozenset(
    {
        "current_timestamp",
        "current_date",
        "current_time",
        "localtimestamp",
        "current_user",
        "session_user",
    }
)
# Strings Spark turns into the current date or time when it casts them (typed literals,
# explicit and implicit casts of constants): 'now', 'today', 'yesterday', 'tomorrow' [zone].
SPECIAL_DATETIME = re.compile(r"\s*(now|today|yesterday|tomorrow)(\s+\S+)?\s*", re.IGNORECASE)

# Python-only spellings (the call's last name), besides the Spark names above.
PYTHON_CALLS = frozenset(
    {
        "utcnow",
        "today",
        "time_ns",
        "uuid1",
        "uuid4",
        "urandom",
        "getrandbits",
        "randint",
        "randrange",
        "sample",
        "randomSplit",
        "getuser",
        "getlogin",
    }
)
PYTHON_RANDOM_MODULES = frozenset({"random", "secrets"})
# PySpark calls whose string arguments are SQL even as a single word: F.expr("current_date").
PYTHON_SQL_TEXT_CALLS = frozenset({"expr", "selectExpr", "sql", "filter", "where"})
SINGLE_NAME = re.compile(r"\s*[^\W\d]\w*\s*")


@dataclass(frozen=True)
class Finding:
    """What was found: ``what`` reads "function uuid()", "value 'today'", "clause TABLESAMPLE"."""

    name: str
    what: str
    line: int  # 1-based line of the code it was found in
    text: str  # that line, stripped

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class Token:
    kind: str  # word, quoted (backtick identifier), string, op
    text: str
    start: int


def find_nondeterministic(code: str, language: str = "sql") -> Finding | None:
    """The first non-deterministic spelling in code (Spark SQL, or Python model code)."""
    if language == "python":
        return _find_in_python(code)
    return _find_in_sql(code)


# --- Spark SQL --------------------------------------------------------------------------


def sql_tokens(code: str) -> list[Token]:
    """Words, backtick identifiers, string literals and operators; comments and blanks dropped."""
    tokens: list[Token] = []
    i, n = 0, len(code)
    while i < n:
        char = code[i]
        if char.isspace():
            i += 1
        elif code.startswith("--", i):
            end = code.find("\n", i)
            i = n if end < 0 else end + 1
        elif code.startswith("/*", i):
            i = _skip_block_comment(code, i)
        elif char in "'\"":
            raw = bool(tokens) and tokens[-1].kind == "word" and tokens[-1].text in ("r", "R")
            if raw and tokens[-1].start + 1 == i:
                tokens.pop()
            else:
                raw = False
            end = _string_end(code, i, raw)
            tokens.append(Token("string", code[i + 1 : end - 1], i))
            i = end
        elif char == "`":
            end = i + 1
            while end < n:
                if code[end] == "`":
                    if code.startswith("``", end):
                        end += 2
                        continue
                    break
                end += 1
            tokens.append(Token("quoted", code[i + 1 : end].replace("``", "`"), i))
            i = end + 1
        elif char.isalnum() or char == "_":
            end = i
            while end < n and (code[end].isalnum() or code[end] == "_"):
                end += 1
            tokens.append(Token("word", code[i:end], i))
            i = end
        else:
            width = 2 if code[i : i + 2] in ("->", "::") else 1
            tokens.append(Token("op", code[i : i + width], i))
            i += width
    return tokens


def _skip_block_comment(code: str, i: int) -> int:
    """The index after the /* */ comment at i (Spark nests them); the end if unterminated."""
    depth = 0
    while i < len(code):
        if code.startswith("/*", i):
            depth += 1
            i += 2
        elif code.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return i


def _string_end(code: str, i: int, raw: bool) -> int:
    """The index after the string literal opened at i (a backslash escapes unless raw)."""
    quote = code[i]
    j = i + 1
    while j < len(code):
        if code[j] == "\\" and not raw:
            j += 2
            continue
        if code[j] == quote:
            return j + 1
        j += 1
    return len(code)


def _find_in_sql(code: str, adjacent_calls: bool = False) -> Finding | None:
    """adjacent_calls: a call needs "(" right after the name (SQL inside Python strings, where
    prose such as "the user (root)" is more likely than "user ()")."""
    tokens = sql_tokens(code)
    for index, token in enumerate(tokens):
        found = _sql_finding(tokens, index, adjacent_calls)
        if found:
            name, what = found
            line = code.count("\n", 0, token.start) + 1
            return Finding(name, what, line, _line(code, line))
    return None


def _sql_finding(tokens: list[Token], index: int, adjacent_calls: bool) -> tuple[str, str] | None:
    token = tokens[index]
    if token.kind == "string":
        if SPECIAL_DATETIME.fullmatch(token.text):
            return token.text.strip(), f"value '{token.text.strip()}'"
        return None
    if token.kind not in ("word", "quoted"):
        return None
    name = token.text.lower()
    after = tokens[index + 1] if index + 1 < len(tokens) else None
    before = tokens[index - 1] if index > 0 else None
    if token.kind == "word" and name == "tablesample":
        return name, "clause TABLESAMPLE"
    if _is_op(after, "("):
        end = token.start + len(token.text) + (2 if token.kind == "quoted" else 0)
        if name not in SQL_CALLS or (adjacent_calls and after.start != end):
            return None
        if name == "unix_timestamp" and not _is_op(_at(tokens, index + 2), ")"):
            return None
        return name, f"function {name}()"
    if token.kind != "word" or name not in SQL_BARE:
        return None
    if _is_op(before, ".") or (
        before is not None and before.kind == "word" and before.text.lower() == "as"
    ):
        return None
    return name, f"function {name}()"


def _at(tokens: list[Token], index: int) -> Token | None:
    return tokens[index] if index < len(tokens) else None


def _is_op(token: Token | None, text: str) -> bool:
    return token is not None and token.kind == "op" and token.text == text


def _line(code: str, line: int) -> str:
    lines = code.splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


# --- Python -----------------------------------------------------------------------------


def _find_in_python(code: str) -> Finding | None:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return _find_in_sql(code)  # unreadable as Python: the stricter reading
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    sql_arguments = {
        id(argument)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _last_name(node) in PYTHON_SQL_TEXT_CALLS
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]
    }
    findings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _python_call(node)
            if name:
                findings.append(Finding(name, f"function {name}()", node.lineno, ""))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            found = _python_string(node, id(node) in sql_arguments)
            if found:
                findings.append(found)
    if not findings:
        return None
    first = min(findings, key=lambda f: f.line)
    return Finding(first.name, first.what, first.line, _line(code, first.line))


def _call_chain(node: ast.Call) -> list[str]:
    """The names of the called function: ['F', 'rand'] for F.rand(), ['sample'] for x().sample()."""
    chain: list[str] = []
    func = node.func
    while isinstance(func, ast.Attribute):
        chain.insert(0, func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        chain.insert(0, func.id)
    return chain


def _last_name(node: ast.Call) -> str | None:
    chain = _call_chain(node)
    return chain[-1] if chain else None


def _python_call(node: ast.Call) -> str | None:
    """The dotted name of a non-deterministic call (F.rand, datetime.now), or None."""
    chain = _call_chain(node)
    if not chain:
        return None
    last = chain[-1]
    no_arguments = not node.args and not node.keywords
    if last in SQL_CALLS and (last != "unix_timestamp" or no_arguments):
        return ".".join(chain)
    if last in PYTHON_CALLS or chain[-2:] == ["time", "time"]:
        return ".".join(chain)
    if any(part in PYTHON_RANDOM_MODULES for part in chain[:-1]):
        return ".".join(chain)
    return None


def _python_string(node: ast.Constant, is_sql: bool) -> Finding | None:
    """A string PySpark may read as SQL (F.expr, spark.sql), checked as Spark SQL; is_sql: it
    is an argument of expr, selectExpr, sql, filter or where, so even a single word is SQL."""
    text = node.value
    if SPECIAL_DATETIME.fullmatch(text):
        return Finding(text.strip(), f"value '{text.strip()}'", node.lineno, "")
    if SINGLE_NAME.fullmatch(text) and not is_sql:
        return None  # a column or alias name
    found = _find_in_sql(text, adjacent_calls=True)
    if found is None:
        return None
    multiline = (node.end_lineno or node.lineno) > node.lineno
    line = node.lineno + (found.line - 1 if multiline else 0)
    return Finding(found.name, found.what, line, "")
