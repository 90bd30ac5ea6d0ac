//! The tags the visible text loses: reasoning blocks, vendor regions (tool-call markup
//! written into the text: DeepSeek's, Hermes/Qwen's `<tool_call>`, Llama's `<function=…>`;
//! Llama's role headers, gpt-oss's analysis channel) and single special tokens that local
//! servers let through as text.

/// A block whose content never reaches the user.
#[derive(Debug, Clone, Copy)]
pub(super) struct Region {
    /// The opening tag.
    pub open: &'static str,
    /// The closing tag.
    pub close: &'static str,
    /// A reasoning block: also removed before tool calls are recovered, and a closing tag
    /// without its opening tag ends reasoning that began before the text did.
    pub reasoning: bool,
}

const fn reasoning(open: &'static str, close: &'static str) -> Region {
    Region {
        open,
        close,
        reasoning: true,
    }
}

const fn vendor(open: &'static str, close: &'static str) -> Region {
    Region {
        open,
        close,
        reasoning: false,
    }
}

/// Every region; DeepSeek's markers come with full-width bars and, as some servers
/// re-encode them, with ASCII bars.
pub(super) const REGIONS: &[Region] = &[
    reasoning("<think>", "</think>"),
    reasoning("<thinking>", "</thinking>"),
    reasoning("<reasoning>", "</reasoning>"),
    vendor("<|channel|>analysis<|message|>", "<|end|>"),
    vendor("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"),
    vendor("<|tool▁calls▁begin|>", "<|tool▁calls▁end|>"),
    vendor("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
    vendor("<|tool▁call▁begin|>", "<|tool▁call▁end|>"),
    vendor("<｜DSML｜function_calls>", "</｜DSML｜function_calls>"),
    vendor("<|DSML|function_calls>", "</|DSML|function_calls>"),
    vendor("<|start_header_id|>", "<|end_header_id|>"),
    // Tool calls a local model writes into its text (recovered from the text before this
    // filter runs, `tagged.rs`): never shown, and held back while a tag may be starting,
    // so a client that cannot take text back (`/v1/chat/completions`) never gets markup.
    vendor("<tool_call>", "</tool_call>"),
    vendor("<tool_calls>", "</tool_calls>"),
    vendor("<tool_use>", "</tool_use>"),
    vendor("<function_call>", "</function_call>"),
    vendor("<functioncall>", "</functioncall>"),
    vendor("<|tool_call|>", "<|/tool_call|>"),
    vendor("<function=", "</function>"),
];

/// Special tokens dropped wherever they appear.
pub(super) const TOKENS: &[&str] = &[
    // DeepSeek
    "<｜end▁of▁sentence｜>",
    "<|end▁of▁sentence|>",
    "<｜begin▁of▁sentence｜>",
    "<|begin▁of▁sentence|>",
    "<｜end▁of▁thinking｜>",
    "<|end▁of▁thinking|>",
    "<end▁of▁thinking>",
    "<｜Assistant｜>",
    "<｜User｜>",
    // ChatML (Qwen, Hermes, Yi) and GPT-style end of text
    "<|im_end|>",
    "<|im_start|>",
    "<|endoftext|>",
    // Llama 3
    "<|eot_id|>",
    "<|eom_id|>",
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|python_tag|>",
    // Llama 2, Mistral
    "[INST]",
    "[/INST]",
    "</s>",
    // Gemma
    "<start_of_turn>",
    "<end_of_turn>",
    "<eos>",
    // Phi
    "<|end|>",
    "<|assistant|>",
    "<|user|>",
    "<|system|>",
    // Command R
    "<|END_OF_TURN_TOKEN|>",
    // gpt-oss (harmony)
    "<|start|>assistant",
    "<|channel|>final<|message|>",
    "<|return|>",
    "<|call|>",
];

/// The longest tag, in bytes (how much a partial tag can hold back).
pub(super) fn longest_tag() -> usize {
    REGIONS
        .iter()
        .flat_map(|region| [region.open, region.close])
        .chain(TOKENS.iter().copied())
        .map(str::len)
        .max()
        .unwrap_or(0)
}
