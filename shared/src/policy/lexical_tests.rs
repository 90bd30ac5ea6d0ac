//! Cases for the lexical safety net: each refused form was checked to run code in bash 5.2.

use super::check;

#[test]
fn inert_forms_pass() {
    for src in [
        "echo $HOME",
        "cat \"${FILE}\" ${1} $1 \"$@\" $# $? ${#} ${10} $$ $!",
        "echo '$(rm -f /tmp/x)' '`id`' '${x:-y}'",
        "echo \"\\$(id)\" \\`id\\` \\${x:-y}",
        "echo $'it\\'s $(id)'",
        "echo $((2**10)) $(( (1 + 2) * 3 ))",
        "uptime # $(reboot) `id`",
        "cat <<'EOF'\n$(id) `id` ${x:-y}\nEOF\necho done",
        "cat <<-\"E\"\n\t$(id)\n\tE",
        "cat <<\\E | grep a\n`id`\nE",
        "cat <<E\nplain $HOME ${USER}\nE",
        "cat <<< \"$HOME\"",
        "grep -r \"foo\" /etc",
        "echo a$",
        "echo \"a$\" \"$'x'\"",
        "ls \\\n  -la /etc",
        "echo {a,b} x{1..3}",
        "[[ a < b ]] && echo yes",
    ] {
        assert_eq!(check(src), Ok(()), "{src:?}");
    }
}

#[test]
fn code_is_refused() {
    for src in [
        // the review's exploit and its quoting variants
        "echo ${x:-`docker network create vigil-redteam-net`}",
        "echo \"${x:-`id`}\"",
        "echo ${x:-$(id)}",
        "echo `id`",
        "echo \"`id`\"",
        "echo \"$(id)\"",
        // parameter operators
        "echo ${x@P}",
        "echo ${!x}",
        "echo ${#x}",
        "echo ${x/a/b}",
        "echo ${y:x}",
        "echo ${a[i]}",
        "echo ${x:-a}",
        "echo ${ x}",
        // arithmetic
        "echo $((x+1))",
        "echo $((a[0]))",
        "echo $[1+1]",
        "echo $((1) )",
        "((x))",
        "for ((i=0; i<3; i++)); do :; done",
        // line continuations inside an operator
        "echo $\\\n(id)",
        "echo \"$\\\n(id)\"",
        "cat <\\\n<E\nx\nE\nid",
        // here-documents
        "cat <<EOF\n`id`\nEOF",
        "cat <<EOF\n$(id)\nEOF",
        "cat <<EOF\n${x:-y}\nEOF",
        "cat <<E\\\nOF\n`id`\nEOF",
        "cat <<EOF\nline \\\nEOF\n$(id)\nEOF",
        "cat <<EOF\nno end",
        "cat <<EOF",
        "cat <<$x\nbody\n$x",
        // comments only at the start of a word
        "echo a#`id`",
        "echo a\\ #$(id)",
        // quoting that bash reads differently from a naive scan
        "echo $$'\\' $(id) #'",
        "echo $\"text\"",
        // process substitution and {name} redirections
        "cat <(id)",
        "tee >(id)",
        "ls {PATH}</dev/null; ls",
        "echo {fd}>&-",
        "echo 'unterminated",
        "echo \"unterminated",
    ] {
        assert!(check(src).is_err(), "{src:?}");
    }
}
