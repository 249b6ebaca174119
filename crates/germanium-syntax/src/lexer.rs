//! Turns Viper source text into [`Token`]s, skipping whitespace and comments.
//!
//! Never fails: characters that cannot start a token become [`TokenKind::Unknown`] tokens, and
//! unterminated comments and strings are reported as `parser.error`s. The token list always
//! ends with one [`TokenKind::Eof`].

use crate::span::{FileId, Span};
use crate::token::{Sym, Token, TokenKind};
use crate::Diagnostic;

pub fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'$' || c == b'_'
}

pub fn is_ident_continue(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'$' || c == b'_'
}

/// Lexes a whole file.
pub fn lex(file: FileId, text: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let bytes = text.as_bytes();
    let mut tokens = Vec::with_capacity(text.len() / 3 + 1);
    let mut diags = Vec::new();
    let mut i = 0usize;
    let mut spaces_only = true;
    let err = |start: usize, end: usize, msg: &str| {
        Diagnostic::parser(Span::new(file, start as u32, end as u32), msg.to_string())
    };
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b' ' => {
                i += 1;
                continue;
            }
            b'\t' | b'\n' | b'\r' => {
                spaces_only = false;
                i += 1;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                spaces_only = false;
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                spaces_only = false;
                match text[i + 2..].find("*/") {
                    Some(k) => i = i + 2 + k + 2,
                    None => {
                        diags.push(err(i, i + 2, "unterminated comment: missing `*/`"));
                        i = bytes.len();
                    }
                }
                continue;
            }
            _ => {}
        }
        let start = i;
        let kind = if is_ident_start(c) {
            while i < bytes.len() && is_ident_continue(bytes[i]) {
                i += 1;
            }
            TokenKind::Ident
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            TokenKind::Int
        } else if c == b'"' {
            match text[i + 1..].find('"') {
                Some(k) => {
                    i = i + 1 + k + 1;
                    TokenKind::Str
                }
                None => {
                    diags.push(err(i, i + 1, "unterminated string literal: missing `\"`"));
                    i = bytes.len();
                    TokenKind::Unknown
                }
            }
        } else if let Some((sym, len)) = symbol(&bytes[i..]) {
            i += len;
            TokenKind::Sym(sym)
        } else {
            // Skip one whole character (never split a UTF-8 sequence).
            let len = text[i..].chars().next().map_or(1, char::len_utf8);
            i += len;
            let shown = &text[start..i];
            diags.push(err(
                start,
                i,
                &format!("unexpected character `{}`", shown.escape_debug()),
            ));
            TokenKind::Unknown
        };
        tokens.push(Token {
            kind,
            start: start as u32,
            end: i as u32,
            spaces_before: spaces_only,
        });
        spaces_only = true;
    }
    let end = bytes.len() as u32;
    tokens.push(Token {
        kind: TokenKind::Eof,
        start: end,
        end,
        spaces_before: spaces_only,
    });
    (tokens, diags)
}

/// The longest symbol at the start of `rest`, with its length in bytes.
fn symbol(rest: &[u8]) -> Option<(Sym, usize)> {
    let at = |k: usize| rest.get(k).copied().unwrap_or(0);
    let two = (at(0), at(1));
    let sym = match two {
        (b'<', b'=') if at(2) == b'=' && at(3) == b'>' => return Some((Sym::Iff, 4)),
        (b'=', b'=') if at(2) == b'>' => return Some((Sym::Implies, 3)),
        (b'-', b'-') if at(2) == b'*' => return Some((Sym::Wand, 3)),
        (b':', b':') => (Sym::ColonColon, 2),
        (b':', b'=') => (Sym::Assign, 2),
        (b'.', b'.') => (Sym::DotDot, 2),
        (b'=', b'=') => (Sym::EqEq, 2),
        (b'!', b'=') => (Sym::Ne, 2),
        (b'<', b'=') => (Sym::Le, 2),
        (b'>', b'=') => (Sym::Ge, 2),
        (b'&', b'&') => (Sym::AndAnd, 2),
        (b'|', b'|') => (Sym::OrOr, 2),
        (b'+', b'+') => (Sym::PlusPlus, 2),
        _ => {
            let s = match at(0) {
                b'(' => Sym::LParen,
                b')' => Sym::RParen,
                b'[' => Sym::LBracket,
                b']' => Sym::RBracket,
                b'{' => Sym::LBrace,
                b'}' => Sym::RBrace,
                b',' => Sym::Comma,
                b';' => Sym::Semi,
                b':' => Sym::Colon,
                b'.' => Sym::Dot,
                b'<' => Sym::Lt,
                b'>' => Sym::Gt,
                b'!' => Sym::Bang,
                b'+' => Sym::Plus,
                b'-' => Sym::Minus,
                b'*' => Sym::Star,
                b'/' => Sym::Slash,
                b'\\' => Sym::Backslash,
                b'%' => Sym::Percent,
                b'?' => Sym::Question,
                b'|' => Sym::Bar,
                b'@' => Sym::At,
                _ => return None,
            };
            (s, 1)
        }
    };
    Some(sym)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        let (toks, diags) = lex(FileId(0), text);
        assert!(diags.is_empty(), "{diags:?}");
        toks.into_iter().map(|t| t.kind).collect()
    }

    fn syms(text: &str) -> Vec<Sym> {
        kinds(text)
            .into_iter()
            .filter_map(|k| {
                if let TokenKind::Sym(s) = k {
                    Some(s)
                } else {
                    None
                }
            })
            .collect()
    }

    #[test]
    fn operators_take_the_longest_match() {
        use Sym::*;
        assert_eq!(
            syms("<==> ==> --* <= < == := :: : .. ."),
            vec![Iff, Implies, Wand, Le, Lt, EqEq, Assign, ColonColon, Colon, DotDot, Dot]
        );
        assert_eq!(syms("a--b"), vec![Minus, Minus]);
        assert_eq!(syms("|s| || ++ +"), vec![Bar, Bar, OrOr, PlusPlus, Plus]);
    }

    #[test]
    fn words_numbers_strings_and_comments() {
        use TokenKind::*;
        assert_eq!(
            kinds("x$1 _y 12 \"a b\" // c\n /* d \n e */ z"),
            vec![Ident, Ident, Int, Str, Ident, Eof]
        );
        assert_eq!(
            kinds("1..2"),
            vec![Int, Sym(crate::token::Sym::DotDot), Int, Eof]
        );
    }

    #[test]
    fn spaces_before_is_false_across_lines_and_comments() {
        let (toks, _) = lex(FileId(0), "f (x) g\n(y) h/**/(z)");
        let lparens: Vec<bool> = toks
            .iter()
            .filter(|t| t.kind == TokenKind::Sym(Sym::LParen))
            .map(|t| t.spaces_before)
            .collect();
        assert_eq!(lparens, vec![true, false, false]);
    }

    #[test]
    fn bad_input_is_reported_not_fatal() {
        for text in ["/* open", "\"open", "a € b", "\u{0}", "x /*/"] {
            let (toks, diags) = lex(FileId(0), text);
            assert!(!diags.is_empty(), "{text}");
            assert_eq!(toks.last().map(|t| t.kind), Some(TokenKind::Eof));
        }
        let (_, diags) = lex(FileId(0), "");
        assert!(diags.is_empty());
    }
}
