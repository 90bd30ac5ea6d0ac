//! The one classification of a tool call: resolve, read or write, by tool and action only
//! (never by command text, invariant 2). An unknown tool or action is a write.

/// What a tool call does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolClass {
    /// Finds resources (the inventory only).
    Resolve,
    /// Reads from a host.
    Read,
    /// Changes something.
    Write,
}

impl ToolClass {
    /// `resolve`, `read` or `write`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolClass::Resolve => "resolve",
            ToolClass::Read => "read",
            ToolClass::Write => "write",
        }
    }
}

/// The class of `action` of tool `name`; unknown tools and actions are writes.
pub fn classify_tool(name: &str, action: Option<&str>) -> ToolClass {
    action
        .and_then(|action| super::table::action(name, action))
        .map_or(ToolClass::Write, |a| a.class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_contract_and_unknowns_are_writes() {
        let cases = [
            ("query", "search", ToolClass::Resolve),
            ("query", "health", ToolClass::Resolve),
            ("read", "exec", ToolClass::Read),
            ("read", "logs", ToolClass::Read),
            ("control", "command", ToolClass::Write),
            ("control", "service", ToolClass::Write),
            ("file_edit", "read", ToolClass::Read),
            ("file_edit", "write", ToolClass::Write),
            ("file_edit", "append", ToolClass::Write),
            ("docker", "logs", ToolClass::Read),
            ("docker", "control", ToolClass::Write),
            ("kubernetes", "describe", ToolClass::Read),
            ("metrics", "host", ToolClass::Read),
            ("knowledge", "recall", ToolClass::Read),
            ("knowledge", "remember", ToolClass::Write),
            ("shell", "exec", ToolClass::Write),
            ("read", "write", ToolClass::Write),
        ];
        for (tool, action, class) in cases {
            assert_eq!(classify_tool(tool, Some(action)), class, "{tool} {action}");
        }
        assert_eq!(classify_tool("read", None), ToolClass::Write);
    }
}
