//! Tokens of Viper source text, as produced by [`crate::lexer`].

/// Punctuation and operator symbols. Keywords are ordinary [`TokenKind::Ident`] tokens; the
/// parser decides where a word is reserved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sym {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    ColonColon,
    Dot,
    DotDot,
    /// `:=`
    Assign,
    /// `==`
    EqEq,
    /// `!=`
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `<==>`
    Iff,
    /// `==>`
    Implies,
    /// `--*`
    Wand,
    AndAnd,
    OrOr,
    Bang,
    Plus,
    PlusPlus,
    Minus,
    Star,
    Slash,
    Backslash,
    Percent,
    Question,
    /// `|`, the delimiter of `|s|`.
    Bar,
    At,
}

impl Sym {
    pub fn text(self) -> &'static str {
        match self {
            Sym::LParen => "(",
            Sym::RParen => ")",
            Sym::LBracket => "[",
            Sym::RBracket => "]",
            Sym::LBrace => "{",
            Sym::RBrace => "}",
            Sym::Comma => ",",
            Sym::Semi => ";",
            Sym::Colon => ":",
            Sym::ColonColon => "::",
            Sym::Dot => ".",
            Sym::DotDot => "..",
            Sym::Assign => ":=",
            Sym::EqEq => "==",
            Sym::Ne => "!=",
            Sym::Lt => "<",
            Sym::Le => "<=",
            Sym::Gt => ">",
            Sym::Ge => ">=",
            Sym::Iff => "<==>",
            Sym::Implies => "==>",
            Sym::Wand => "--*",
            Sym::AndAnd => "&&",
            Sym::OrOr => "||",
            Sym::Bang => "!",
            Sym::Plus => "+",
            Sym::PlusPlus => "++",
            Sym::Minus => "-",
            Sym::Star => "*",
            Sym::Slash => "/",
            Sym::Backslash => "\\",
            Sym::Percent => "%",
            Sym::Question => "?",
            Sym::Bar => "|",
            Sym::At => "@",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// A word: identifier or keyword (`[A-Za-z$_][A-Za-z0-9$_]*`).
    Ident,
    /// A decimal literal.
    Int,
    /// A string literal including its quotes (Viper strings have no escapes).
    Str,
    Sym(Sym),
    /// A character that cannot start any token; the lexer has reported it.
    Unknown,
    Eof,
}

/// One token: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
    /// Whether only spaces (or nothing) separate this token from the previous one: Viper
    /// accepts a call `f (x)` but not `f` and `(x)` across a line break, tab or comment.
    pub spaces_before: bool,
}
