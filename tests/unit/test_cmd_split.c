/* test_cmd_split.c — upstream's tests/unit/runtime/utils/test_bash_parsing.py (OpenHands 0.62.0)
 * ported: split_bash_commands and escape_bash_special_chars with bashlex 0.18's outcomes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "executor/cmd_split.h"

static void
expect_split(const char *in, size_t n, ...)
{
    cmd_list_t l;
    va_list ap;
    cmd_split(in, &l);
    assert_int_equal(l.n, n);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(l.cmds[i], va_arg(ap, const char *));
    va_end(ap);
    cmd_list_free(&l);
}

static void
expect_escape(const char *in, const char *out)
{
    char *e = cmd_escape_special_chars(in);
    assert_string_equal(e, out);
    free(e);
}

static void
test_split_keeps_single_commands(void **state)
{
    (void)state;
    static const char *const one[] = {
        "ls -l",
        "echo 'Hello, world!'",
        "cd /tmp && touch test.txt",
        "echo -e 'line1\\nline2\\nline3'",
        "grep 'pattern' file.txt | sort | uniq",
        "for i in {1..5}; do echo $i; done",
        "echo 'Single quotes don\\'t escape'",
        "echo \"Double quotes \\\"do\\\" escape\"",
        "cat <<EOF\nmultiline\ntext\nEOF",
        "echo \"Command with a trailing backslash \\\n  and continuation\"",
        "find /tmp/test_dir -type f -exec grep -l \"implemented_function\" {} \\;",
        "ls & pwd",
        "ls;",
        "ls &",
        "a && b || c",
        "ls |\nwc -l",
        "ls &&\npwd",
        "echo a\\\nb",
        "if true; then\necho \"inside if\"\nfi",
        "(cd x\nls)",
        "{ ls\npwd; }",
        "echo \"$(ls\npwd)\"",
        "echo `ls`",
        "f() {\n  echo\n}",
        "while true; do\nsleep 1\ndone",
        "python -c \"import sys\nprint(1)\"",
        "cat <<-EOF\n\tx\n\tEOF",
        NULL};
    for (int i = 0; one[i]; i++)
        expect_split(one[i], 1, one[i]);
}

static void
test_split_multiline_commands_util(void **state)
{
    (void)state;
    expect_split(
        "ls -l\necho -e \"hello\nworld\"\necho -e \"hello it's me\"\n"
        "echo \\\n    -e 'hello' \\\n    -v\necho -e 'hello\\nworld\\nare\\nyou\\nthere?'\n"
        "echo -e 'hello\nworld\nare\nyou\\n\nthere?'\necho -e 'hello\nworld \"\n'\n"
        "kubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\nEOF\n"
        "mkdir -p _modules && for month in {01..04}; do\n    for day in {01..05}; do\n"
        "        touch \"_modules/2024-${month}-${day}-sample.md\"\n    done\ndone",
        9, "ls -l", "echo -e \"hello\nworld\"", "echo -e \"hello it's me\"",
        "echo \\\n    -e 'hello' \\\n    -v", "echo -e 'hello\\nworld\\nare\\nyou\\nthere?'",
        "echo -e 'hello\nworld\nare\nyou\\n\nthere?'", "echo -e 'hello\nworld \"\n'",
        "kubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\nEOF",
        "mkdir -p _modules && for month in {01..04}; do\n    for day in {01..05}; do\n"
        "        touch \"_modules/2024-${month}-${day}-sample.md\"\n    done\ndone");
}

static void
test_split_heredoc_stays_whole(void **state)
{
    (void)state;
    expect_split("\ncat <<EOF\nmultiline\ntext\nEOF\necho \"Done\"\n", 2,
                 "cat <<EOF\nmultiline\ntext\nEOF", "echo \"Done\"");
    expect_split("cat <<EOF | grep x\nx\nEOF\nls", 2, "cat <<EOF | grep x\nx\nEOF", "ls");
}

static void
test_split_quoted_heredoc_delimiter_is_one_command(void **state)
{
    (void)state; /* bashlex 0.18 looks for the delimiter with its quotes: parse failure */
    expect_split("cat <<'EOF'\n$x\nEOF\nls", 1, "cat <<'EOF'\n$x\nEOF\nls");
    expect_split("cat <<\"EOF\"\nx\nEOF\nls", 1, "cat <<\"EOF\"\nx\nEOF\nls");
}

static void
test_split_backslash_continuation(void **state)
{
    (void)state;
    expect_split(
        "\necho \"This is a long command that spans multiple lines\"\necho \"Next command\"\n", 2,
        "echo \"This is a long command that spans multiple lines\"", "echo \"Next command\"");
}

static void
test_split_comments_stick_to_previous(void **state)
{
    (void)state;
    expect_split("\necho \"Hello\" # This is a comment\n# This is another comment\nls -l\n", 2,
                 "echo \"Hello\" # This is a comment\n# This is another comment", "ls -l");
    expect_split("# comment\nls", 2, "# comment", "ls");
    expect_split("ls\n# trailing", 1, "ls\n# trailing");
}

static void
test_split_complex_quoting(void **state)
{
    (void)state;
    expect_split("\necho \"This is a \\\"quoted\\\" string\"\necho 'This is a '''single-quoted''' "
                 "string'\necho \"Mixed 'quotes' in \\\"double quotes\\\"\"\n",
                 3, "echo \"This is a \\\"quoted\\\" string\"",
                 "echo 'This is a '''single-quoted''' string'",
                 "echo \"Mixed 'quotes' in \\\"double quotes\\\"\"");
}

static void
test_split_empty_lines(void **state)
{
    (void)state;
    expect_split("\nls -l\n\necho \"Hello\"\n\ncd /tmp\n", 3, "ls -l", "echo \"Hello\"", "cd /tmp");
    expect_split("   \n ", 1, "");
}

static void
test_split_unparseable_is_one_command(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "echo \"Unclosed quote", "echo 'Unclosed quote", "cat <<EOF\nUnclosed heredoc",
        "echo `unclosed backtick",
        "curl -X POST \"https://x\" \\ -H \"A: b\" \\ -d '{ \"a\": false }' `echo unclosed",
        "# 0. Setup directory\\nrm -rf /w && mkdir -p /w\\n\\n# 1. Run sphinx",
        /* bashlex 0.18 does not implement these: the whole text runs as given */
        "case x in a) echo;; esac\nls", "[[ -f x ]] && echo y\nls", "echo $((1+2))\nls",
        "echo $[1+1]\nls", "for ((i=0;i<3;i++)); do echo; done\nls", "a=(1 2)\nls",
        "select x in a; do echo; done\nls", "time ls\nls", "coproc ls\nls", "ls &&", "ls |",
        "echo a\\", "if true; then; fi\nls", "echo (\nls", NULL};
    for (int i = 0; bad[i]; i++)
        expect_split(bad[i], 1, bad[i]);
}

static void
test_split_top_level_lines(void **state)
{
    (void)state;
    expect_split("ls\npwd &", 2, "ls", "pwd &");
    expect_split("(( i++ ))\nls", 2, "(( i++ ))", "ls");
    expect_split("echo $(echo `pwd`)\nls", 2, "echo $(echo `pwd`)", "ls");
    expect_split("git status\ngit diff", 2, "git status", "git diff");
}

static void
test_refusal_text_exact(void **state)
{
    (void)state;
    cmd_list_t l;
    cmd_split("ls\npwd", &l);
    char *r = cmd_split_refusal(&l);
    assert_string_equal(r, "ERROR: Cannot execute multiple commands at once.\n"
                           "Please run each command separately OR chain them into a single "
                           "command via && or ;\nProvided commands:\n(1) ls\n(2) pwd");
    free(r);
    cmd_list_free(&l);
}

static void
test_escape_special_chars(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"echo test \\; ls", "echo test \\\\; ls"},
        {"grep pattern \\| sort", "grep pattern \\\\| sort"},
        {"cmd1 \\&\\& cmd2", "cmd1 \\\\&\\\\& cmd2"},
        {"cat file \\> output.txt", "cat file \\\\> output.txt"},
        {"cat \\< input.txt", "cat \\\\< input.txt"},
        {"echo \"test \\; unchanged\"", "echo \"test \\; unchanged\""},
        {"echo 'test \\| unchanged'", "echo 'test \\| unchanged'"},
        {"echo \"quoted \\;\" \\; \"more\" \\| grep",
         "echo \"quoted \\;\" \\\\; \"more\" \\\\| grep"},
        {"cmd1 \\;\\|\\& cmd2", "cmd1 \\\\;\\\\|\\\\& cmd2"},
        {"echo test\\ntest", "echo test\\ntest"},
        {"", ""},
        {"\\\\", "\\\\"},
        {"\\\"", "\\\""},
        {"echo 'unclosed quote", "echo 'unclosed quote"},
        {"cat <<EOF\nline1 \\; not escaped\nline2 \\| not escaped\nEOF",
         "cat <<EOF\nline1 \\; not escaped\nline2 \\| not escaped\nEOF"},
        {"echo $HOME \\; ls", "echo $HOME \\\\; ls"},
        {"echo ${!prefix*} \\| sort", "echo ${!prefix*} \\\\| sort"},
        {"echo $(find . -name \"*.txt\" \\; ls)", "echo $(find . -name \"*.txt\" \\; ls)"},
        {"echo `pwd` \\| grep home", "echo `pwd` \\\\| grep home"},
        {"VAR=${HOME} \\; echo $(pwd)", "VAR=${HOME} \\\\; echo $(pwd)"},
        {"find . -name \"*.txt\" -exec grep \"${PATTERN:-default}\" {} \\;",
         "find . -name \"*.txt\" -exec grep \"${PATTERN:-default}\" {} \\\\;"},
        {"cmd1 \\; ls && cmd2 \\| grep && cmd3", "cmd1 \\\\; ls && cmd2 \\\\| grep && cmd3"},
        {"ls > a\\;", "ls > a\\;"},
        {"for i in a; do echo \\; ; done", "for i in a; do echo \\; ; done"},
        /* upstream repeats what follows a heredoc on its line: mirrored */
        {"cat <<EOF > out.txt\nx\nEOF", "cat <<EOF > out.txt\nx\nEOF > out.txt\nx\nEOF"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_escape(cases[i][0], cases[i][1]);
}

static void
test_deep_nesting_is_refused_not_crashed(void **state)
{
    (void)state;
    char text[2 * 400 + 8];
    size_t n = 0;
    for (int i = 0; i < 400; i++)
        text[n++] = '(';
    for (int i = 0; i < 400; i++)
        text[n++] = ')';
    text[n] = '\0';
    expect_split(text, 1, text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_keeps_single_commands),
        cmocka_unit_test(test_split_multiline_commands_util),
        cmocka_unit_test(test_split_heredoc_stays_whole),
        cmocka_unit_test(test_split_quoted_heredoc_delimiter_is_one_command),
        cmocka_unit_test(test_split_backslash_continuation),
        cmocka_unit_test(test_split_comments_stick_to_previous),
        cmocka_unit_test(test_split_complex_quoting),
        cmocka_unit_test(test_split_empty_lines),
        cmocka_unit_test(test_split_unparseable_is_one_command),
        cmocka_unit_test(test_split_top_level_lines),
        cmocka_unit_test(test_refusal_text_exact),
        cmocka_unit_test(test_escape_special_chars),
        cmocka_unit_test(test_deep_nesting_is_refused_not_crashed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
