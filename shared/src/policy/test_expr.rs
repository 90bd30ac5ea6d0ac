//! What the arguments of `[ … ]`, `test …` and `[[ … ]]` may be.
//!
//! The tests only compare and look at files, with two exceptions that run code: `-v NAME`
//! evaluates an array subscript in NAME (`[ -v 'a[$(id)]' ]`), and inside `[[ … ]]` the
//! arithmetic operators evaluate both operands as expressions, whose names and subscripts
//! run command substitutions (`x='a[$(id)]'; [[ $x -eq 0 ]]`). `[` and `test` decide what
//! is an operator only after expansion, so a computed word may itself become `-v`.

use super::word::{Word, WordKind};

/// Unary tests that only look at a file or a string (not `-a`/`-o`, which are also
/// connectives, nor `-v`/`-R`, which look a variable up).
const UNARY: &[&str] = &[
    "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-k", "-L", "-n", "-N", "-O", "-G", "-p", "-r", "-s",
    "-S", "-t", "-u", "-w", "-x", "-z",
];

/// Binary tests; in `[`/`test` the arithmetic ones read plain integers only.
const BINARY: &[&str] = &[
    "=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef",
];

/// The arithmetic comparisons.
const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Tests that look a variable up, evaluating any subscript in its name.
const LOOKUP: &[&str] = &["-v", "-R"];

fn literal(w: &Word) -> Option<&str> {
    (w.kind == WordKind::Literal).then_some(w.text.as_str())
}

fn refuse_lookup(args: &[Word]) -> Result<(), String> {
    match args
        .iter()
        .find_map(|w| literal(w).filter(|t| LOOKUP.contains(t)))
    {
        Some(op) => Err(format!(
            "test {op} evaluates the subscript of a variable name, which can run commands"
        )),
        None => Ok(()),
    }
}

/// `[ … ]` and `test …` (without the closing `]`). A computed word must be one word and
/// stand where it cannot be read as an operator: alone, after a unary test, or beside a
/// binary test (bash's `test` looks for a binary operator before anything else).
pub(crate) fn single_bracket(args: &[Word]) -> Result<(), String> {
    refuse_lookup(args)?;
    let op = |i: usize, set: &[&str]| {
        args.get(i)
            .and_then(literal)
            .is_some_and(|t| set.contains(&t))
    };
    for (i, w) in args.iter().enumerate() {
        if w.kind == WordKind::Literal {
            continue;
        }
        if w.may_split() || w.kind == WordKind::Glob {
            return Err(format!(
                "test argument {} may expand to several words, one of them -v",
                w.src
            ));
        }
        let placed = args.len() == 1
            || (i > 0 && (op(i - 1, UNARY) || op(i - 1, BINARY)))
            || op(i + 1, BINARY);
        if !placed {
            return Err(format!(
                "test argument {} stands where its value could be read as an operator",
                w.src
            ));
        }
    }
    Ok(())
}

/// `[[ … ]]`: operators are fixed when the command is parsed, so only literal `-v`/`-R`
/// and the arithmetic comparisons matter; their operands must be plain integers.
pub(crate) fn double_bracket(args: &[Word]) -> Result<(), String> {
    refuse_lookup(args)?;
    let integer = |w: Option<&Word>| {
        w.and_then(literal).is_some_and(|t| {
            let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
            !digits.is_empty() && digits.chars().all(|d| d.is_ascii_digit())
        })
    };
    for (i, w) in args.iter().enumerate() {
        if literal(w).is_some_and(|t| ARITHMETIC.contains(&t))
            && !(i > 0 && integer(args.get(i - 1)) && integer(args.get(i + 1)))
        {
            return Err(format!(
                "arithmetic test {} evaluates its operands as expressions, whose names and \
                 subscripts can run commands; only plain integers are accepted",
                w.text
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(words: &[&str]) -> Vec<Word> {
        words.iter().map(|w| Word::literal(w)).collect()
    }

    #[test]
    fn lookups_and_computed_operators_are_refused() {
        assert!(single_bracket(&lit(&["-v", "a[$(id)]"])).is_err());
        assert!(single_bracket(&lit(&["-R", "x"])).is_err());
        assert!(double_bracket(&lit(&["-v", "x"])).is_err());
        let dynamic = Word {
            splits: false,
            ..Word::dynamic("\"$op\"")
        };
        assert!(single_bracket(&[dynamic.clone(), Word::literal("x")]).is_err());
        assert!(single_bracket(&[Word::literal("-f"), dynamic.clone()]).is_ok());
        assert!(single_bracket(&[dynamic.clone(), Word::literal("="), dynamic.clone()]).is_ok());
        assert!(single_bracket(std::slice::from_ref(&dynamic)).is_ok());
        assert!(single_bracket(&[Word::literal("-n"), Word::dynamic("$x")]).is_err());
        assert!(double_bracket(&[dynamic, Word::literal("-eq"), Word::literal("0")]).is_err());
    }

    #[test]
    fn plain_tests_pass() {
        assert!(single_bracket(&lit(&["-f", "/etc/hosts"])).is_ok());
        assert!(double_bracket(&lit(&["1", "-eq", "1"])).is_ok());
        assert!(double_bracket(&lit(&["x", "-eq", "1"])).is_err());
        assert!(double_bracket(&lit(&["-e", "/var/run/docker.sock"])).is_ok());
    }
}
