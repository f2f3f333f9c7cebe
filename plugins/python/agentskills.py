"""agentskills: the helpers OpenHands agents call inside IPython cells, for sandpipe's kernel.

Written for sandpipe with the output formats of OpenHands' agent_skills (file_ops: open_file,
goto_line, scroll_down, scroll_up, search_dir, search_file, find_file) and of openhands-aci's
file_editor (the OHEditor's texts, the same the executor's own editor prints). The kernel runs
`from agentskills import *` when it starts, as upstream's action server does.
"""

import json
import os
import subprocess
import uuid

__all__ = ['open_file', 'goto_line', 'scroll_down', 'scroll_up', 'search_dir',
           'search_file', 'find_file', 'file_editor']

WINDOW = 100
_state = {'file': None, 'line': 1}


def _error(msg):
    print(f'ERROR: {msg}')


def _count_lines(path):
    with open(path) as f:
        return max(1, sum(1 for _ in f))


def _window_text(path, target, window, from_target):
    """The numbered window around (or, scrolling, from) target, with the above/below notes."""
    with open(path) as f:
        text = f.read()
    if not text.endswith('\n'):
        text += '\n'
    lines = text.splitlines(True)
    total = len(lines)
    cur = min(max(target, 1), total)
    _state['line'] = cur
    half = max(1, window // 2)
    if from_target:
        first, last = max(1, cur), min(total, cur + window)
    else:
        first, last = max(1, cur - half), min(total, cur + half)
    if first == 1:
        last = min(total, first + window - 1)
    if last == total:
        first = max(1, last - window + 1)
    parts = [f'({first - 1} more lines above)\n' if first > 1
             else '(this is the beginning of the file)\n']
    for n in range(first, last + 1):
        row = f'{n}|{lines[n - 1]}'
        parts.append(row if row.endswith('\n') else row + '\n')
    parts.append(f'({total - last} more lines below)\n' if last < total
                 else '(this is the end of the file)\n')
    return ''.join(parts).rstrip()


def _header(path, total):
    return f'[File: {os.path.abspath(path)} ({total} lines total)]\n'


def _current_file():
    path = _state['file']
    if not path or not os.path.isfile(path):
        _error('No file open. Use the open_file function first.')
        return None
    return path


def open_file(path, line_number=1, context_lines=WINDOW):
    """Opens the file at path in the editor, centred on line_number (1 by default), showing at
    most context_lines lines (up to 100). Use scroll_down/scroll_up to see more."""
    if not os.path.isfile(path):
        _error(f'File {path} not found.')
        return
    _state['file'] = os.path.abspath(path)
    total = _count_lines(_state['file'])
    if not isinstance(line_number, int) or not 1 <= line_number <= total:
        _error(f'Line number must be between 1 and {total}')
        return
    if context_lines is None or context_lines < 1:
        context_lines = WINDOW
    out = _header(_state['file'], total) + _window_text(
        _state['file'], line_number, min(max(context_lines, 1), 100), False)
    if out.strip().endswith('more lines below)'):
        out += '\n[Use `scroll_down` to view the next 100 lines of the file!]'
    print(out)


def goto_line(line_number):
    """Moves the window of the open file to show line_number."""
    path = _current_file()
    if not path:
        return
    total = _count_lines(path)
    if not isinstance(line_number, int) or not 1 <= line_number <= total:
        _error(f'Line number must be between 1 and {total}.')
        return
    print(_header(path, total) + _window_text(path, line_number, WINDOW, False))


def _scroll(delta):
    path = _current_file()
    if not path:
        return
    total = _count_lines(path)
    target = min(max(_state['line'] + delta, 1), total)
    print(_header(path, total) + _window_text(path, target, WINDOW, True))


def scroll_down():
    """Moves the window of the open file down by 100 lines."""
    _scroll(WINDOW)


def scroll_up():
    """Moves the window of the open file up by 100 lines."""
    _scroll(-WINDOW)


def search_dir(search_term, dir_path='./'):
    """Searches every (non-hidden) file under dir_path for search_term."""
    if not os.path.isdir(dir_path):
        _error(f'Directory {dir_path} not found')
        return
    hits = []
    for root, _, names in os.walk(dir_path):
        for name in names:
            if name.startswith('.'):
                continue
            full = os.path.join(root, name)
            with open(full, 'r', errors='ignore') as f:
                hits += [(full, n, line.strip()) for n, line in enumerate(f, 1) if search_term in line]
    if not hits:
        print(f'No matches found for "{search_term}" in {dir_path}')
        return
    files = len({h[0] for h in hits})
    if files > 100:
        print(f'More than {files} files matched for "{search_term}" in {dir_path}. '
              'Please narrow your search.')
        return
    print(f'[Found {len(hits)} matches for "{search_term}" in {dir_path}]')
    for full, n, line in hits:
        print(f'{full} (Line {n}): {line}')
    print(f'[End of matches for "{search_term}" in {dir_path}]')


def search_file(search_term, file_path=None):
    """Searches file_path (by default the open file) for search_term."""
    if file_path is None:
        file_path = _state['file']
    if file_path is None:
        _error('No file specified or open. Use the open_file function first.')
        return
    if not os.path.isfile(file_path):
        _error(f'File {file_path} not found.')
        return
    with open(file_path) as f:
        hits = [(n, line.strip()) for n, line in enumerate(f, 1) if search_term in line]
    if not hits:
        print(f'[No matches found for "{search_term}" in {file_path}]')
        return
    print(f'[Found {len(hits)} matches for "{search_term}" in {file_path}]')
    for n, line in hits:
        print(f'Line {n}: {line}')
    print(f'[End of matches for "{search_term}" in {file_path}]')


def find_file(file_name, dir_path='./'):
    """Finds the files under dir_path whose name contains file_name."""
    if not os.path.isdir(dir_path):
        _error(f'Directory {dir_path} not found')
        return
    found = [os.path.join(root, n) for root, _, names in os.walk(dir_path)
             for n in names if file_name in n]
    if not found:
        print(f'[No matches found for "{file_name}" in {dir_path}]')
        return
    print(f'[Found {len(found)} matches for "{file_name}" in {dir_path}]')
    for f in found:
        print(f)
    print(f'[End of matches for "{file_name}" in {dir_path}]')


# ---- file_editor: the OHEditor's commands and texts ----

SNIPPET_LINES = 4
MAX_CHARS = 16000
TRUNCATED = ('<response clipped><NOTE>Due to the max output limit, only part of this file has been '
             'shown to you. You should retry this tool after you have searched inside the file with '
             '`grep -n` in order to find the line numbers of what you are looking for.</NOTE>')
_history = {}


class _ToolError(Exception):
    pass


def _numbered(text, desc, first=1):
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + TRUNCATED
    body = '\n'.join(f'{n:6}\t{line}' for n, line in enumerate(text.split('\n'), first))
    return f"Here's the result of running `cat -n` on {desc}:\n{body}\n"


def _check_path(command, path):
    if not os.path.isabs(path):
        raise _ToolError(f'Invalid `path` parameter: {path}. The path should be an absolute path, '
                         'starting with `/`.')
    exists = os.path.exists(path)
    if command == 'create' and exists:
        raise _ToolError(f'Invalid `path` parameter: {path}. File already exists at: {path}. '
                         'Cannot overwrite files using command `create`.')
    if command != 'create' and not exists:
        raise _ToolError(f'Invalid `path` parameter: {path}. The path {path} does not exist. '
                         'Please provide a valid path.')
    if command != 'view' and os.path.isdir(path):
        raise _ToolError(f'Invalid `path` parameter: {path}. The path {path} is a directory and '
                         'only the `view` command can be used on directories.')


def _read(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def _write(path, text):
    os.makedirs(os.path.dirname(path) or '/', exist_ok=True)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text)


def _remember(path, text):
    _history.setdefault(path, []).append(text)
    del _history[path][:-10]


def _view(path, view_range):
    if os.path.isdir(path):
        if view_range:
            raise _ToolError(f'Invalid `view_range` parameter: {view_range}. The `view_range` '
                             'parameter is not allowed when `path` points to a directory.')
        out = subprocess.run(['find', '-L', path, '-maxdepth', '2', '-not', '-path', '*/.*'],
                             capture_output=True, text=True).stdout
        rows = sorted(p + '/' if os.path.isdir(p) else p for p in out.split('\n') if p)
        return (f"Here's the files and directories up to 2 levels deep in {path}, excluding "
                'hidden items:\n' + '\n'.join(rows) + '\n')
    text = _read(path)
    if not view_range:
        return _numbered(text, path)
    lines = text.split('\n')
    if len(view_range) != 2 or not all(isinstance(i, int) for i in view_range):
        raise _ToolError(f'Invalid `view_range` parameter: {view_range}. It should be a list of '
                         'two integers.')
    first, last = view_range
    if not 1 <= first <= len(lines):
        raise _ToolError(f'Invalid `view_range` parameter: {view_range}. Its first element '
                         f'`{first}` should be within the range of lines of the file: '
                         f'[1, {len(lines)}].')
    if last != -1 and (last < first or last > len(lines)):
        raise _ToolError(f'Invalid `view_range` parameter: {view_range}. Its second element '
                         f'`{last}` should be `-1` or within [{first}, {len(lines)}].')
    shown = lines[first - 1:] if last == -1 else lines[first - 1:last]
    return _numbered('\n'.join(shown), path, first)


def _str_replace(path, old, new):
    if old is None:
        raise _ToolError('Parameter `old_str` is required for command: str_replace.')
    new = new or ''
    if new == old:
        raise _ToolError(f'Invalid `new_str` parameter: {new}. No replacement was performed. '
                         '`new_str` and `old_str` must be different.')
    text = _read(path)
    count = text.count(old)
    if count == 0:
        old, new = old.strip(), new.strip()
        count = text.count(old)
    if count == 0:
        raise _ToolError(f'No replacement was performed, old_str `{old}` did not appear '
                         f'verbatim in {path}.')
    if count > 1:
        at, lines = 0, []
        while (at := text.find(old, at)) >= 0:
            n = text.count('\n', 0, at) + 1
            if n not in lines:
                lines.append(n)
            at += len(old)
        raise _ToolError(f'No replacement was performed. Multiple occurrences of old_str `{old}` '
                         f'in lines {lines}. Please ensure it is unique.')
    line = text.count('\n', 0, text.find(old)) + 1
    updated = text.replace(old, new, 1)
    _write(path, updated)
    _remember(path, text)
    first = max(0, line - SNIPPET_LINES)
    last = line + SNIPPET_LINES + new.count('\n')
    snippet = '\n'.join(updated.split('\n')[first:last + 1])
    return (f'The file {path} has been edited. ' + _numbered(snippet, f'a snippet of {path}', first + 1)
            + 'Review the changes and make sure they are as expected. Edit the file again if necessary.')


def _insert(path, at, new):
    if at is None:
        raise _ToolError('Parameter `insert_line` is required for command: insert.')
    if new is None:
        raise _ToolError('Parameter `new_str` is required for command: insert.')
    text = _read(path)
    lines = text.split('\n') if text else []
    if not 0 <= at <= len(lines):
        raise _ToolError(f'Invalid `insert_line` parameter: {at}. It should be within the range '
                         f'of allowed values: [0, {len(lines)}]')
    new_lines = new.split('\n')
    updated = '\n'.join(lines[:at] + new_lines + lines[at:])
    _write(path, updated)
    _remember(path, text)
    snippet = lines[max(0, at - SNIPPET_LINES):at] + new_lines + lines[at:at + SNIPPET_LINES]
    return (f'The file {path} has been edited. '
            + _numbered('\n'.join(snippet), 'a snippet of the edited file', max(1, at - SNIPPET_LINES + 1))
            + 'Review the changes and make sure they are as expected (correct indentation, no '
            'duplicate lines, etc). Edit the file again if necessary.')


def _undo(path):
    if not _history.get(path):
        raise _ToolError(f'No edit history found for {path}.')
    old = _history[path].pop()
    _write(path, old)
    return f'Last edit to {path} undone successfully. ' + _numbered(old, path)


def file_editor(command, path=None, file_text=None, view_range=None, old_str=None, new_str=None,
                insert_line=None, enable_linting=False, **_):
    """The OHEditor: view, create, str_replace, insert and undo_edit on absolute paths. Returns
    the text an agent reads (errors start with "ERROR:\\n")."""
    try:
        _check_path(command, path or '')
        old_content = None
        if command == 'view':
            out = _view(path, view_range)
        elif command == 'create':
            if file_text is None:
                raise _ToolError('Parameter `file_text` is required for command: create.')
            _write(path, file_text)
            _remember(path, file_text)
            out = f'File created successfully at: {path}'
        elif command == 'str_replace':
            old_content = _read(path)
            out = _str_replace(path, old_str, new_str)
        elif command == 'insert':
            old_content = _read(path)
            out = _insert(path, insert_line, new_str)
        elif command == 'undo_edit':
            old_content = _read(path)
            out = _undo(path)
        else:
            raise _ToolError(f'Unrecognized command {command}. The allowed commands for the '
                             'oh_editor tool are: view, create, str_replace, insert, undo_edit')
    except _ToolError as e:
        return f'ERROR:\n{e}'
    except OSError as e:
        return f'ERROR:\n{e}'
    result = {'output': out, 'error': None, 'path': path,
              'prev_exist': command != 'create', 'old_content': old_content,
              'new_content': _read(path) if command != 'view' and os.path.isfile(path) else None,
              'formatted_output_and_error': out}
    marker = uuid.uuid4().hex
    return f'<oh_aci_output_{marker}>\n{json.dumps(result, indent=2)}\n</oh_aci_output_{marker}>'
