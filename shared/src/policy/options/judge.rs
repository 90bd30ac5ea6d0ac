//! From a [`Walk`] to a verdict: the denial first, then every option occurrence's effect,
//! then the subcommand's class and the read node's constraints. A read is what is left.

use super::table::{Class, Effect};
use super::walk::{Occ, Value, Walk};
use crate::policy::types::Risk;
use crate::policy::verdict::Verdict;

/// The verdict of `tool` for a walk. `Class::Delegate` nodes are the caller's to decide;
/// here they are a read only for their effects and the parent's options.
pub(crate) fn judge(tool: &str, w: &Walk<'_, '_>) -> Verdict {
    let leaf_write = !w.path.is_empty() && w.node.subs.is_empty() && w.node.class == Class::Write;
    if let Some(why) = &w.deny {
        let v = Verdict::unknown(format!("{tool}: {why}, so it is not known to only read"));
        // A write subcommand stays a write, with its own reason first.
        return if leaf_write {
            class_write(tool, w).because(v.reasons.concat())
        } else {
            v
        };
    }
    let path = if w.path.is_empty() {
        tool.to_owned()
    } else {
        format!("{tool} {}", w.path.join(" "))
    };
    for occ in &w.occs {
        if let Some(v) = effect(&path, w, occ) {
            return v;
        }
    }
    let node = w.node;
    let class = if !node.subs.is_empty() {
        node.no_sub
    } else {
        node.class
    };
    if class == Class::Write {
        let risk = if node.high { Risk::High } else { Risk::Medium };
        let why = node.why.as_deref().unwrap_or("changes state");
        return Verdict::write(risk, format!("{path} {why}"));
    }
    if !node.needs_one_of.is_empty() && !node.needs_one_of.iter().any(|id| w.has(id)) {
        let names: Vec<String> = node
            .needs_one_of
            .iter()
            .map(|n| {
                if n.chars().count() == 1 {
                    format!("-{n}")
                } else {
                    format!("--{n}")
                }
            })
            .collect();
        return Verdict::write(
            if node.high { Risk::High } else { Risk::Medium },
            format!(
                "{path} without one of {} {}",
                names.join(", "),
                node.why.as_deref().unwrap_or("changes state")
            ),
        );
    }
    if !w.operands.is_empty()
        && !node.operands_need_one_of.is_empty()
        && !node.operands_need_one_of.iter().any(|id| w.has(id))
    {
        return Verdict::write(
            if node.high { Risk::High } else { Risk::Medium },
            format!(
                "{path} with an operand and no listing option {}",
                node.why
                    .as_deref()
                    .unwrap_or("creates what the operand names")
            ),
        );
    }
    if let Some(max) = node.max_operands {
        let many = w
            .operands
            .iter()
            .any(|(_, word)| word.may_split() || word.kind == crate::policy::word::WordKind::Glob);
        if w.operands.len() > max || many {
            return Verdict::unknown(format!(
                "{path} takes at most {max} operand(s) as a read; more (or a glob, which may \
                 be several) are {}",
                node.why
                    .as_deref()
                    .unwrap_or("arguments that change something")
            ));
        }
    }
    Verdict::read(format!("{path} only reads"))
}

/// The verdict one option occurrence forces, if any.
fn effect(tool: &str, w: &Walk<'_, '_>, occ: &Occ<'_>) -> Option<Verdict> {
    let risk = if occ.opt.high {
        Risk::High
    } else {
        Risk::Medium
    };
    let why = |default: &str| {
        format!(
            "{tool} {} {}",
            occ.written,
            occ.opt.why.as_deref().unwrap_or(default)
        )
    };
    match occ.opt.effect {
        Effect::Read | Effect::Get | Effect::Next => None,
        Effect::Write => Some(Verdict::write(risk, why("changes state"))),
        Effect::Exec => Some(Verdict::write(Risk::High, why("runs another program"))),
        Effect::Config => Some(Verdict::unknown(why(
            "reads options or commands from a file nobody has seen",
        ))),
        Effect::WriteFile => match &occ.value {
            Some(Value::Fixed(v))
                if matches!(v.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
                    || (occ.opt.dash && v == "-") =>
            {
                None
            }
            Some(Value::Fixed(v)) => Some(Verdict::write(risk, why(&format!("writes {v}")))),
            _ => Some(Verdict::write(risk, why("writes a file"))),
        },
        Effect::Method => match &occ.value {
            Some(Value::Fixed(m))
                if matches!(m.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS") =>
            {
                None
            }
            Some(Value::Fixed(m)) => Some(Verdict::write(
                risk,
                format!("{tool} {} {m} changes remote state", occ.written),
            )),
            _ => Some(Verdict::write(
                risk,
                why("sets a method computed at run time"),
            )),
        },
        Effect::Body => {
            let get = w
                .occs
                .iter()
                .any(|o| o.section == occ.section && o.opt.effect == Effect::Get);
            (!get).then(|| Verdict::write(risk, why("sends a request body")))
        }
    }
}

/// The verdict of a write subcommand.
fn class_write(tool: &str, w: &Walk<'_, '_>) -> Verdict {
    let risk = if w.node.high {
        Risk::High
    } else {
        Risk::Medium
    };
    let why = w.node.why.as_deref().unwrap_or("changes state");
    Verdict::write(risk, format!("{tool} {} {why}", w.path.join(" ")))
}
