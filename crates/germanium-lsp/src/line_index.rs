//! Positions as the protocol counts them (line, UTF-16 code unit) and byte offsets as
//! Germanium's spans count them, converted both ways for one text.

use lsp_types::{Position, Range};

/// Where each line of a text starts.
pub struct LineIndex<'t> {
    text: &'t str,
    line_starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> LineIndex<'t> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// The position of a byte offset (clamped to the text, rounded down to a character).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line];
        let character: usize = self.text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of a position (a column past the line's end is its end; a line
    /// past the text's end is the text's end).
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.line_starts.get(position.line as usize) else {
            return self.text.len();
        };
        let line_end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        let mut units = 0;
        for (i, c) in self.text[start..line_end].char_indices() {
            if units >= position.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        line_end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_convert_back() {
        // `é` is two bytes and one unit; `𝔸` four bytes and two units.
        let text = "ab\né𝔸x\n\nlast";
        let index = LineIndex::new(text);
        assert_eq!(index.position(0), Position::new(0, 0));
        assert_eq!(index.position(3), Position::new(1, 0));
        let x = text.find('x').unwrap();
        assert_eq!(index.position(x), Position::new(1, 3));
        assert_eq!(index.offset(Position::new(1, 3)), x);
        assert_eq!(index.offset(Position::new(1, 99)), x + 1);
        assert_eq!(index.offset(Position::new(3, 2)), text.len() - 2);
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.position(text.len() + 5), Position::new(3, 4));
        // Inside a character: rounded down to its start.
        assert_eq!(index.position(4), Position::new(1, 0));
    }
}
