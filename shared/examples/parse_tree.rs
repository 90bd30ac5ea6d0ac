//! Prints the tree-sitter-bash syntax tree of each argument: a debugging aid for the
//! classifier (`cargo run -p vigil-shared --example parse_tree -- 'ls | head'`).

#![allow(clippy::print_stdout)]

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into())?;
    for arg in std::env::args().skip(1) {
        let Some(tree) = parser.parse(&arg, None) else {
            println!("{arg:?}: no tree");
            continue;
        };
        println!("{arg:?}");
        print_node(tree.root_node(), &arg, 1, None);
    }
    Ok(())
}

fn print_node(node: tree_sitter::Node<'_>, src: &str, depth: usize, field: Option<&str>) {
    let text = &src[node.byte_range()];
    let named = if node.is_named() { "" } else { "anon " };
    let missing = if node.is_missing() { " MISSING" } else { "" };
    let field = field.map(|f| format!("{f}: ")).unwrap_or_default();
    println!(
        "{}{field}{named}{}{missing} {:?}",
        "  ".repeat(depth),
        node.kind(),
        text
    );
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        print_node(child, src, depth + 1, node.field_name_for_child(i as u32));
    }
}
