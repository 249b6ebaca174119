//! A byte-steered generator of Viper programs. Each choice (which declaration, statement,
//! expression, type or name comes next) is read from the fuzzer's bytes, so mutating the
//! bytes mutates the program's structure while keeping it mostly parseable. Names come from
//! small pools shared by declarations and uses, so uses resolve often but not always, and
//! types agree sometimes: enough to reach every corner of name resolution, type inference and
//! the consistency rules. Nesting is bounded so every program is small.

use libfuzzer_sys::arbitrary::Unstructured;

const FIELDS: &[&str] = &["f", "g", "next"];
const VARIABLES: &[&str] = &["x", "y", "r", "s", "b", "res"];
const FUNCTIONS: &[&str] = &["fun0", "fun1"];
const PREDICATES: &[&str] = &["P", "Q"];
const METHODS: &[&str] = &["m0", "m1"];
const DOMAIN_FUNCTIONS: &[&str] = &["dfun", "dconst"];
const MACROS: &[&str] = &["M", "N", "S"];
const LABELS: &[&str] = &["l0", "l1", "lhs"];
const TYPE_VARIABLES: &[&str] = &["T", "U"];

const BINARY_OPERATORS: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "\\",
    "%",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "==>",
    "<==>",
    "in",
    "++",
    "union",
    "intersection",
    "setminus",
    "subset",
    "--*",
];

/// The program for `data`; empty bytes give an empty program.
pub fn program(data: &[u8]) -> String {
    let mut g = Generator {
        u: Unstructured::new(data),
        out: String::new(),
    };
    let count = g.int(0, 8);
    for _ in 0..count {
        g.declaration();
        g.out.push('\n');
    }
    g.out
}

struct Generator<'a> {
    u: Unstructured<'a>,
    out: String,
}

impl Generator<'_> {
    fn int(&mut self, low: u32, high: u32) -> u32 {
        self.u.int_in_range(low..=high).unwrap_or(low)
    }

    fn pick<'s>(&mut self, words: &[&'s str]) -> &'s str {
        words[self.int(0, words.len() as u32 - 1) as usize]
    }

    fn word(&mut self, words: &[&str]) {
        let w = self.pick(words);
        self.out.push_str(w);
    }

    fn text(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// Calls `item` between 0 and `most` times, separated by `separator`.
    fn list(&mut self, most: u32, separator: &str, mut item: impl FnMut(&mut Self)) {
        let count = self.int(0, most);
        for i in 0..count {
            if i > 0 {
                self.text(separator);
            }
            item(self);
        }
    }

    fn declaration(&mut self) {
        match self.int(0, 10) {
            0 => {
                self.text("field ");
                self.word(FIELDS);
                self.text(": ");
                self.ty(2);
            }
            1 | 2 => self.function(),
            3 => self.predicate(),
            4..=6 => self.method(),
            7 => self.domain(),
            8 => self.adt(),
            9 => self.define(true),
            _ => {
                let library = [
                    "decreases/int.vpr",
                    "decreases/all.vpr",
                    "adt/derives.vpr",
                    "nope.vpr",
                ];
                self.text("import <");
                self.word(&library);
                self.text(">");
            }
        }
    }

    fn parameters(&mut self) {
        self.text("(");
        self.list(3, ", ", |g| {
            g.word(VARIABLES);
            g.text(": ");
            g.ty(2);
        });
        self.text(")");
    }

    fn contracts(&mut self, keywords: &[&str]) {
        self.list(3, "", |g| {
            g.text("\n  ");
            g.word(keywords);
            g.text(" ");
            g.expr(4);
        });
    }

    fn function(&mut self) {
        self.text("function ");
        self.word(FUNCTIONS);
        self.parameters();
        self.text(": ");
        self.ty(2);
        self.contracts(&["requires", "ensures", "decreases"]);
        if self.int(0, 3) > 0 {
            self.text("\n{ ");
            self.expr(5);
            self.text(" }");
        }
    }

    fn predicate(&mut self) {
        self.text("predicate ");
        self.word(PREDICATES);
        self.parameters();
        if self.int(0, 3) > 0 {
            self.text(" { ");
            self.expr(5);
            self.text(" }");
        }
    }

    fn method(&mut self) {
        self.text("method ");
        self.word(METHODS);
        self.parameters();
        if self.int(0, 1) == 1 {
            self.text(" returns ");
            self.parameters();
        }
        self.contracts(&["requires", "ensures", "decreases"]);
        if self.int(0, 4) > 0 {
            self.block(3);
        }
    }

    fn domain(&mut self) {
        self.text("domain D");
        if self.int(0, 1) == 1 {
            self.text("[");
            self.list(2, ", ", |g| g.word(TYPE_VARIABLES));
            self.text("]");
        }
        self.text(" {\n");
        self.list(4, "\n", |g| {
            if g.int(0, 1) == 0 {
                g.text("  ");
                if g.int(0, 3) == 0 {
                    g.text("unique ");
                }
                g.text("function ");
                g.word(DOMAIN_FUNCTIONS);
                g.parameters();
                g.text(": ");
                g.ty(2);
            } else {
                g.text("  axiom ");
                if g.int(0, 1) == 0 {
                    g.text("ax ");
                }
                g.text("{ ");
                g.expr(4);
                g.text(" }");
            }
        });
        self.text("\n}");
        if self.int(0, 3) == 0 {
            self.text(" interpretation (SMTLIB: \"x\")");
        }
    }

    fn adt(&mut self) {
        self.text("adt List[T] {\n  Nil()\n  Cons(");
        self.list(2, ", ", |g| {
            g.word(&["head", "tail", "x"]);
            g.text(": ");
            g.ty(2);
        });
        self.text(")\n}");
        if self.int(0, 2) == 0 {
            self.text(" derives { contains }");
        }
    }

    /// `define M(a, b) body`; the body is an expression, or a block when `allow_block`.
    fn define(&mut self, allow_block: bool) {
        self.text("define ");
        self.word(MACROS);
        if self.int(0, 3) > 0 {
            self.text("(");
            self.list(2, ", ", |g| g.word(VARIABLES));
            self.text(")");
        }
        self.text(" ");
        if allow_block && self.int(0, 2) == 0 {
            self.block(1);
        } else {
            self.expr(3);
        }
    }

    fn block(&mut self, depth: u32) {
        self.text("{\n");
        self.list(5, "\n", |g| g.stmt(depth));
        self.text("\n}");
    }

    fn stmt(&mut self, depth: u32) {
        let nested = if depth == 0 { 14 } else { 20 };
        match self.int(0, nested) {
            0 => {
                self.text("var ");
                self.word(VARIABLES);
                self.text(": ");
                self.ty(2);
                if self.int(0, 1) == 1 {
                    self.text(" := ");
                    self.expr(4);
                }
            }
            1 | 2 => {
                self.list(2, ", ", |g| g.target());
                self.text(" := ");
                self.expr(4);
            }
            3 => {
                self.word(VARIABLES);
                self.text(" := ");
                self.word(METHODS);
                self.arguments(3);
            }
            4 => {
                self.word(&["assert ", "assume ", "inhale ", "exhale ", "refute "]);
                self.expr(4);
            }
            5 => {
                self.word(&["fold ", "unfold "]);
                self.predicate_access(3);
            }
            6 => {
                self.word(&["label ", "goto "]);
                self.word(LABELS);
            }
            7 => {
                self.word(VARIABLES);
                self.text(" := new(");
                self.list(2, ", ", |g| g.word(&["f", "g", "*"]));
                self.text(")");
            }
            8 => {
                self.word(&["package ", "apply "]);
                self.expr(3);
            }
            9 => {
                self.text("quasihavoc ");
                self.expr(2);
            }
            10 => self.define(false),
            11 => {
                self.word(MACROS);
                if self.int(0, 1) == 0 {
                    self.arguments(2);
                }
            }
            12 => {
                self.word(METHODS);
                self.arguments(3);
            }
            13 | 14 => {
                self.word(VARIABLES);
                self.text(".");
                self.word(FIELDS);
                self.text(" := ");
                self.expr(3);
            }
            15..=17 => {
                self.text("if (");
                self.expr(3);
                self.text(") ");
                self.block(depth - 1);
                self.list(1, "", |g| {
                    g.text(" elseif (");
                    g.expr(3);
                    g.text(") ");
                    g.block(depth - 1);
                });
                if self.int(0, 1) == 1 {
                    self.text(" else ");
                    self.block(depth - 1);
                }
            }
            18 | 19 => {
                self.text("while (");
                self.expr(3);
                self.text(")");
                self.contracts(&["invariant", "decreases"]);
                self.block(depth - 1);
            }
            _ => {
                self.text("package ");
                self.expr(3);
                self.block(depth - 1);
            }
        }
    }

    fn target(&mut self) {
        self.word(VARIABLES);
        if self.int(0, 2) == 0 {
            self.text(".");
            self.word(FIELDS);
        }
    }

    fn arguments(&mut self, depth: u32) {
        self.text("(");
        self.list(3, ", ", |g| g.expr(depth));
        self.text(")");
    }

    fn predicate_access(&mut self, depth: u32) {
        self.text("acc(");
        self.word(PREDICATES);
        self.arguments(depth.saturating_sub(1));
        if self.int(0, 1) == 1 {
            self.text(", ");
            self.permission();
        }
        self.text(")");
    }

    fn permission(&mut self) {
        self.word(&[
            "write",
            "none",
            "wildcard",
            "epsilon",
            "1/2",
            "x",
            "perm(r.f)",
            "-1/1",
        ]);
    }

    fn expr(&mut self, depth: u32) {
        if depth == 0 {
            return self.atom();
        }
        let d = depth - 1;
        match self.int(0, 29) {
            0..=5 => self.atom(),
            6..=10 => {
                self.text("(");
                self.expr(d);
                self.text(" ");
                self.word(BINARY_OPERATORS);
                self.text(" ");
                self.expr(d);
                self.text(")");
            }
            11 => {
                self.word(&["-", "!"]);
                self.expr(d);
            }
            12 => {
                self.text("(");
                self.expr(d);
                self.text(" ? ");
                self.expr(d);
                self.text(" : ");
                self.expr(d);
                self.text(")");
            }
            13 => {
                self.expr(d);
                self.text(".");
                self.word(&["f", "g", "next", "head", "tail", "isNil", "isCons"]);
            }
            14 => {
                self.word(&[
                    "fun0", "fun1", "dfun", "dconst", "Nil", "Cons", "M", "N", "m0", "P",
                ]);
                self.arguments(d);
            }
            15 => {
                self.text("acc(");
                self.expr(d);
                self.text(".");
                self.word(FIELDS);
                if self.int(0, 1) == 1 {
                    self.text(", ");
                    self.permission();
                }
                self.text(")");
            }
            16 => self.predicate_access(d),
            17 => {
                let open = self.pick(&["old(", "old[l0](", "old[lhs](", "perm(", "|"]);
                self.text(open);
                self.expr(d);
                self.text(if open == "|" { "|" } else { ")" });
            }
            18 => {
                self.word(&["Seq", "Set", "Multiset"]);
                if self.int(0, 2) == 0 {
                    self.text("[");
                    self.ty(1);
                    self.text("]");
                }
                self.arguments(d);
            }
            19 => {
                self.expr(d);
                self.text("[");
                self.expr(d);
                self.word(&["]", "..]", ":= 0]", " .. 2]"]);
            }
            20 | 21 => {
                self.word(&["forall ", "exists "]);
                self.word(VARIABLES);
                self.text(": ");
                self.ty(1);
                self.list(1, "", |g| {
                    g.text(", ");
                    g.word(VARIABLES);
                    g.text(": ");
                    g.ty(1);
                });
                self.text(" :: ");
                if self.int(0, 2) == 0 {
                    self.text("{ ");
                    self.expr(2);
                    self.text(" } ");
                }
                self.expr(d);
            }
            22 => {
                self.text("(let ");
                self.word(VARIABLES);
                self.text(" == (");
                self.expr(d);
                self.text(") in ");
                self.expr(d);
                self.text(")");
            }
            23 => {
                self.text("(unfolding ");
                self.predicate_access(d);
                self.text(" in ");
                self.expr(d);
                self.text(")");
            }
            24 => {
                self.text("(forperm ");
                self.word(VARIABLES);
                self.text(": Ref [");
                self.word(&["f", "P(r)", "g"]);
                self.text("] :: ");
                self.expr(d);
                self.text(")");
            }
            25 => {
                self.text("Map[");
                self.ty(1);
                self.text(", ");
                self.ty(1);
                self.text("]()");
            }
            26 => {
                self.text("(applying (");
                self.expr(d);
                self.text(") in ");
                self.expr(d);
                self.text(")");
            }
            _ => {
                self.text("(");
                self.expr(d);
                self.text(")");
            }
        }
    }

    fn atom(&mut self) {
        match self.int(0, 6) {
            0 => {
                let n = self.int(0, 3);
                self.text(&n.to_string());
            }
            1 => self.word(&["true", "false", "null", "result", "write", "none"]),
            2 => self.word(&[
                "Seq[Int]()",
                "Set[Bool]()",
                "Multiset[Ref]()",
                "Nil()",
                "dconst()",
            ]),
            _ => self.word(VARIABLES),
        }
    }

    fn ty(&mut self, depth: u32) {
        let choice = if depth == 0 {
            self.int(0, 5)
        } else {
            self.int(0, 11)
        };
        match choice {
            0 | 1 => self.text("Int"),
            2 => self.text("Bool"),
            3 => self.text("Ref"),
            4 => self.text("Perm"),
            5 => self.word(TYPE_VARIABLES),
            6..=8 => {
                self.word(&["Seq[", "Set[", "Multiset[", "List["]);
                self.ty(depth - 1);
                self.text("]");
            }
            9 => {
                self.text("Map[");
                self.ty(depth - 1);
                self.text(", ");
                self.ty(depth - 1);
                self.text("]");
            }
            10 => {
                self.text("D[");
                self.ty(depth - 1);
                self.text("]");
            }
            _ => self.text("D"),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_programs_are_deterministic_and_bounded() {
        let data: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
            .collect();
        let first = super::program(&data);
        assert_eq!(first, super::program(&data));
        assert!(first.len() < 200_000);
        assert_eq!(super::program(&[]), "");
    }
}
