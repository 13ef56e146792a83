//! Positions in a document as LSP counts them (lines from 0, characters in UTF-16 code
//! units), and the word under the cursor.

use lsp_types::Position;

/// The LSP position of byte `offset` of `text`.
pub(super) fn position(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..line_start].matches('\n').count();
    let character: usize = text[line_start..offset].chars().map(char::len_utf16).sum();
    Position::new(line as u32, character as u32)
}

/// The byte offset of LSP position `at` in `text` (clamped to the line and the text).
pub(super) fn offset(text: &str, at: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..at.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let mut units = 0;
    for (i, c) in text[line_start..line_end].char_indices() {
        if units >= at.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_end
}

/// The word at byte `offset`: letters, digits, `_` and a leading `$` (a metavariable), with
/// its byte range.
pub(super) fn word_at(text: &str, offset: usize) -> Option<(&str, std::ops::Range<usize>)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = text[offset..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(i, _)| offset + i);
    (start < end).then(|| (&text[start..end], start..end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_round_trip() {
        let text = "a: é😀x\nb: y\n";
        let x = text.find('x').unwrap();
        assert_eq!(position(text, x), Position::new(0, 6));
        assert_eq!(offset(text, Position::new(0, 6)), x);
        assert_eq!(offset(text, Position::new(1, 3)), text.find('y').unwrap());
        assert_eq!(offset(text, Position::new(9, 0)), text.len());
        assert_eq!(word_at("match: \"f($ARG)\"", 12).map(|w| w.0), Some("$ARG"));
    }
}
