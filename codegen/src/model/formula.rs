//! A metric's formula as a typed expression: its grammar (Intel's metric files write formulas
//! in a small Python-like language: numbers, names, `+ - * /`, `min(..)`, `max(..)`,
//! comparisons and `x if cond else y`), the parser the validator runs at generation time, the
//! printer (whose output parses back to the same expression), and the postfix form the
//! generated crate evaluates.
//!
//! Names are resolved while parsing, by the caller: an event of the metric, or a constant.
//! An unknown name is an error at its offset, like a syntax error.

use std::fmt;

/// A value the evaluator takes from the machine or the measurement, not from a counter.
/// Names are Intel's (`SYSTEM_TSC_FREQ`), as the metric files and formulas write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Constant {
    /// The TSC frequency in Hz.
    SystemTscFreq,
    /// Sockets in the system.
    SocketCount,
    /// Cores per socket.
    CoresPerSocket,
    /// CHA (caching and home agent) boxes per socket.
    ChasPerSocket,
    /// Hardware threads per core.
    ThreadsPerCore,
    /// 1 when Hyper-Threading is on, else 0.
    HyperthreadingOn,
    /// Logical CPUs in the system.
    CpuCount,
    /// The measurement interval in seconds.
    DurationSeconds,
    /// The measurement interval in milliseconds.
    DurationMilliseconds,
}

impl Constant {
    /// Every constant, in declaration order.
    pub const ALL: [Constant; 9] = [
        Constant::SystemTscFreq,
        Constant::SocketCount,
        Constant::CoresPerSocket,
        Constant::ChasPerSocket,
        Constant::ThreadsPerCore,
        Constant::HyperthreadingOn,
        Constant::CpuCount,
        Constant::DurationSeconds,
        Constant::DurationMilliseconds,
    ];

    /// The name a formula writes.
    pub fn name(self) -> &'static str {
        match self {
            Constant::SystemTscFreq => "SYSTEM_TSC_FREQ",
            Constant::SocketCount => "SOCKET_COUNT",
            Constant::CoresPerSocket => "CORES_PER_SOCKET",
            Constant::ChasPerSocket => "CHAS_PER_SOCKET",
            Constant::ThreadsPerCore => "THREADS_PER_CORE",
            Constant::HyperthreadingOn => "HYPERTHREADING_ON",
            Constant::CpuCount => "CPU_COUNT",
            Constant::DurationSeconds => "DURATIONTIMEINSECONDS",
            Constant::DurationMilliseconds => "DURATIONTIMEINMILLISECONDS",
        }
    }

    /// The Rust variant name (`SystemTscFreq`).
    pub fn variant(self) -> &'static str {
        match self {
            Constant::SystemTscFreq => "SystemTscFreq",
            Constant::SocketCount => "SocketCount",
            Constant::CoresPerSocket => "CoresPerSocket",
            Constant::ChasPerSocket => "ChasPerSocket",
            Constant::ThreadsPerCore => "ThreadsPerCore",
            Constant::HyperthreadingOn => "HyperthreadingOn",
            Constant::CpuCount => "CpuCount",
            Constant::DurationSeconds => "DurationSeconds",
            Constant::DurationMilliseconds => "DurationMilliseconds",
        }
    }

    /// The constant a formula names `name`, in any case.
    pub fn from_name(name: &str) -> Option<Constant> {
        Constant::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }
}

/// A binary operator or two-argument function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`: n/a when the divisor is zero.
    Div,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
    /// `>`: 1 or 0.
    Gt,
    /// `<`: 1 or 0.
    Lt,
    /// `>=`: 1 or 0.
    Ge,
    /// `<=`: 1 or 0.
    Le,
}

impl BinOp {
    /// Every operator, in declaration order.
    pub const ALL: [BinOp; 10] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Min,
        BinOp::Max,
        BinOp::Gt,
        BinOp::Lt,
        BinOp::Ge,
        BinOp::Le,
    ];

    /// The Rust variant name of the generated crate's `Op`.
    pub fn variant(self) -> &'static str {
        match self {
            BinOp::Add => "Add",
            BinOp::Sub => "Sub",
            BinOp::Mul => "Mul",
            BinOp::Div => "Div",
            BinOp::Min => "Min",
            BinOp::Max => "Max",
            BinOp::Gt => "Gt",
            BinOp::Lt => "Lt",
            BinOp::Ge => "Ge",
            BinOp::Le => "Le",
        }
    }

    /// The infix symbol, or `None` for a function (`min`, `max`).
    fn symbol(self) -> Option<&'static str> {
        match self {
            BinOp::Add => Some("+"),
            BinOp::Sub => Some("-"),
            BinOp::Mul => Some("*"),
            BinOp::Div => Some("/"),
            BinOp::Gt => Some(">"),
            BinOp::Lt => Some("<"),
            BinOp::Ge => Some(">="),
            BinOp::Le => Some("<="),
            BinOp::Min | BinOp::Max => None,
        }
    }

    /// Binding strength of an infix operator (higher binds tighter).
    fn precedence(self) -> u8 {
        match self {
            BinOp::Gt | BinOp::Lt | BinOp::Ge | BinOp::Le => 1,
            BinOp::Add | BinOp::Sub => 2,
            BinOp::Mul | BinOp::Div => 3,
            BinOp::Min | BinOp::Max => ATOM,
        }
    }
}

/// Precedence of what needs no parentheses (numbers, names, calls).
const ATOM: u8 = 5;
/// Precedence of unary minus.
const UNARY: u8 = 4;

/// A parsed formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number (never negative: a minus sign is [`Expr::Neg`]).
    Num(f64),
    /// The count of the metric's event with this index.
    Event(usize),
    /// A constant.
    Const(Constant),
    /// `-x`
    Neg(Box<Expr>),
    /// `a op b`, `min(a, b)`, `max(a, b)`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `then if cond else otherwise`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// What a name in a formula stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Leaf {
    /// The metric's event with this index.
    Event(usize),
    /// A constant.
    Const(Constant),
    /// A number the metric file names (Intel writes some parameters as named constants).
    Num(f64),
}

/// One step of the postfix form: operands are pushed, operators pop theirs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Push a number.
    Num(f64),
    /// Push the count of event n.
    Event(usize),
    /// Push a constant.
    Const(Constant),
    /// Pop one, push its negation.
    Neg,
    /// Pop two, push the result.
    Bin(BinOp),
    /// Pop `otherwise`, `then` and `cond`; push `then` if `cond` is not zero, else `otherwise`.
    Select,
}

impl Expr {
    /// The postfix form (operands before operators; `Select` after cond, then, otherwise).
    pub fn postfix(&self) -> Vec<Op> {
        let mut out = Vec::new();
        self.push_postfix(&mut out);
        out
    }

    fn push_postfix(&self, out: &mut Vec<Op>) {
        match self {
            Expr::Num(n) => out.push(Op::Num(*n)),
            Expr::Event(i) => out.push(Op::Event(*i)),
            Expr::Const(c) => out.push(Op::Const(*c)),
            Expr::Neg(x) => {
                x.push_postfix(out);
                out.push(Op::Neg);
            }
            Expr::Bin(op, a, b) => {
                a.push_postfix(out);
                b.push_postfix(out);
                out.push(Op::Bin(*op));
            }
            Expr::If(then, cond, otherwise) => {
                cond.push_postfix(out);
                then.push_postfix(out);
                otherwise.push_postfix(out);
                out.push(Op::Select);
            }
        }
    }

    /// The deepest the evaluator's stack gets for this expression.
    pub fn stack_depth(&self) -> usize {
        match self {
            Expr::Num(_) | Expr::Event(_) | Expr::Const(_) => 1,
            Expr::Neg(x) => x.stack_depth(),
            Expr::Bin(_, a, b) => a.stack_depth().max(1 + b.stack_depth()),
            Expr::If(then, cond, otherwise) => cond
                .stack_depth()
                .max(1 + then.stack_depth())
                .max(2 + otherwise.stack_depth()),
        }
    }

    /// The indices of the events the expression reads, ascending, each once.
    pub fn events(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .postfix()
            .into_iter()
            .filter_map(|op| match op {
                Op::Event(i) => Some(i),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn precedence(&self) -> u8 {
        match self {
            Expr::Num(_) | Expr::Event(_) | Expr::Const(_) => ATOM,
            Expr::Neg(_) => UNARY,
            Expr::Bin(op, _, _) => op.precedence(),
            Expr::If(..) => 0,
        }
    }

    /// Prints the expression with `names` for the events: the fewest parentheses that parse
    /// back to the same tree.
    pub fn display<'a>(&'a self, names: &'a [String]) -> Printed<'a> {
        Printed { expr: self, names }
    }
}

/// An expression with its event names, to print.
pub struct Printed<'a> {
    expr: &'a Expr,
    names: &'a [String],
}

impl Printed<'_> {
    fn child(&self, e: &Expr, min: u8, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = Printed {
            expr: e,
            names: self.names,
        };
        if e.precedence() < min {
            write!(f, "({p})")
        } else {
            write!(f, "{p}")
        }
    }
}

impl fmt::Display for Printed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.expr {
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Event(i) => match self.names.get(*i) {
                Some(name) => f.write_str(name),
                None => write!(f, "?{i}"),
            },
            Expr::Const(c) => f.write_str(c.name()),
            Expr::Neg(x) => {
                f.write_str("-")?;
                self.child(x, UNARY, f)
            }
            Expr::Bin(op, a, b) => match op.symbol() {
                Some(sym) => {
                    let p = op.precedence();
                    // Left-associative; comparisons do not chain.
                    let left = if p == 1 { p + 1 } else { p };
                    self.child(a, left, f)?;
                    write!(f, " {sym} ")?;
                    self.child(b, p + 1, f)
                }
                None => {
                    let name = if *op == BinOp::Min { "min" } else { "max" };
                    write!(f, "{name}(")?;
                    self.child(a, 0, f)?;
                    f.write_str(", ")?;
                    self.child(b, 0, f)?;
                    f.write_str(")")
                }
            },
            Expr::If(then, cond, otherwise) => {
                self.child(then, 1, f)?;
                f.write_str(" if ")?;
                self.child(cond, 1, f)?;
                f.write_str(" else ")?;
                self.child(otherwise, 0, f)
            }
        }
    }
}

/// Why a formula does not parse, and where (a byte offset into the formula).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormulaError {
    /// Byte offset of the problem in the formula.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Sym(&'static str),
    End,
}

/// Splits a formula into tokens with their offsets.
fn tokens(text: &str) -> Result<Vec<(usize, Tok)>, FormulaError> {
    const SYMS: [&str; 11] = [">=", "<=", "+", "-", "*", "/", "(", ")", ",", ">", "<"];
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == b'.' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
                let mut j = i + 1;
                if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j].is_ascii_digit() {
                    i = j;
                    while i < bytes.len() && bytes[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let s = &text[start..i];
            match s.parse::<f64>() {
                Ok(n) if n.is_finite() => out.push((start, Tok::Num(n))),
                _ => {
                    return Err(FormulaError {
                        offset: start,
                        message: format!("`{s}` is not a number"),
                    })
                }
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((start, Tok::Name(text[start..i].to_string())));
        } else if let Some(sym) = SYMS.iter().find(|s| text[i..].starts_with(**s)) {
            out.push((i, Tok::Sym(sym)));
            i += sym.len();
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            return Err(FormulaError {
                offset: i,
                message: format!("unexpected character `{ch}`"),
            });
        }
    }
    out.push((text.len(), Tok::End));
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    resolve: &'a dyn Fn(&str) -> Option<Leaf>,
    depth: usize,
}

/// Nesting beyond this is refused (no formula of Intel's comes near it), so a hostile
/// formula cannot overflow the parser's stack.
const MAX_NESTING: usize = 200;

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].1
    }

    fn offset(&self) -> usize {
        self.toks[self.pos].0
    }

    fn err(&self, message: impl Into<String>) -> FormulaError {
        FormulaError {
            offset: self.offset(),
            message: message.into(),
        }
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        if matches!(self.peek(), Tok::Sym(s) if *s == sym) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Tok::Name(n) if n == word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_sym(&mut self, sym: &'static str) -> Result<(), FormulaError> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{sym}` here, found {}", self.found())))
        }
    }

    fn found(&self) -> String {
        match self.peek() {
            Tok::Num(n) => format!("the number {n}"),
            Tok::Name(n) => format!("`{n}`"),
            Tok::Sym(s) => format!("`{s}`"),
            Tok::End => "the end of the formula".into(),
        }
    }

    fn nest(&mut self) -> Result<(), FormulaError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            Err(self.err(format!("nested more than {MAX_NESTING} deep")))
        } else {
            Ok(())
        }
    }

    /// `then if cond else otherwise`, or a comparison.
    fn conditional(&mut self) -> Result<Expr, FormulaError> {
        self.nest()?;
        let then = self.comparison()?;
        let e = if self.eat_word("if") {
            let cond = self.comparison()?;
            if !self.eat_word("else") {
                return Err(self.err(format!(
                    "expected `else` after `if` condition, found {}",
                    self.found()
                )));
            }
            let otherwise = self.conditional()?;
            Expr::If(Box::new(then), Box::new(cond), Box::new(otherwise))
        } else {
            then
        };
        self.depth -= 1;
        Ok(e)
    }

    fn comparison(&mut self) -> Result<Expr, FormulaError> {
        let a = self.additive()?;
        for (sym, op) in [
            (">=", BinOp::Ge),
            ("<=", BinOp::Le),
            (">", BinOp::Gt),
            ("<", BinOp::Lt),
        ] {
            if self.eat_sym(sym) {
                let b = self.additive()?;
                return Ok(Expr::Bin(op, Box::new(a), Box::new(b)));
            }
        }
        Ok(a)
    }

    fn additive(&mut self) -> Result<Expr, FormulaError> {
        let mut a = self.term()?;
        loop {
            let op = if self.eat_sym("+") {
                BinOp::Add
            } else if self.eat_sym("-") {
                BinOp::Sub
            } else {
                return Ok(a);
            };
            let b = self.term()?;
            a = Expr::Bin(op, Box::new(a), Box::new(b));
        }
    }

    fn term(&mut self) -> Result<Expr, FormulaError> {
        let mut a = self.unary()?;
        loop {
            let op = if self.eat_sym("*") {
                BinOp::Mul
            } else if self.eat_sym("/") {
                BinOp::Div
            } else {
                return Ok(a);
            };
            let b = self.unary()?;
            a = Expr::Bin(op, Box::new(a), Box::new(b));
        }
    }

    fn unary(&mut self) -> Result<Expr, FormulaError> {
        if self.eat_sym("-") {
            self.nest()?;
            let x = self.unary()?;
            self.depth -= 1;
            Ok(Expr::Neg(Box::new(x)))
        } else {
            self.primary()
        }
    }

    fn primary(&mut self) -> Result<Expr, FormulaError> {
        let at = self.offset();
        match self.peek().clone() {
            Tok::Num(n) => {
                self.pos += 1;
                Ok(Expr::Num(n))
            }
            Tok::Sym("(") => {
                self.pos += 1;
                let e = self.conditional()?;
                self.expect_sym(")")?;
                Ok(e)
            }
            Tok::Name(name) if name == "min" || name == "max" => {
                self.pos += 1;
                let op = if name == "min" {
                    BinOp::Min
                } else {
                    BinOp::Max
                };
                self.call(op)
            }
            Tok::Name(name) => {
                self.pos += 1;
                match (self.resolve)(&name) {
                    Some(Leaf::Event(i)) => Ok(Expr::Event(i)),
                    Some(Leaf::Const(c)) => Ok(Expr::Const(c)),
                    Some(Leaf::Num(n)) => Ok(Expr::Num(n)),
                    None => Err(FormulaError {
                        offset: at,
                        message: format!(
                            "`{name}` is neither an event alias of this metric nor a constant"
                        ),
                    }),
                }
            }
            _ => Err(self.err(format!(
                "expected a number, a name or `(`, found {}",
                self.found()
            ))),
        }
    }

    /// `min(a, b, ...)` / `max(..)` after the name: folded left into binary nodes.
    fn call(&mut self, op: BinOp) -> Result<Expr, FormulaError> {
        self.expect_sym("(")?;
        let mut acc = self.conditional()?;
        let mut args = 1;
        while self.eat_sym(",") {
            let b = self.conditional()?;
            acc = Expr::Bin(op, Box::new(acc), Box::new(b));
            args += 1;
        }
        if args < 2 {
            return Err(self.err("min and max take at least two arguments"));
        }
        self.expect_sym(")")?;
        Ok(acc)
    }
}

/// Parses `text`, resolving each name with `resolve`.
pub fn parse(text: &str, resolve: &dyn Fn(&str) -> Option<Leaf>) -> Result<Expr, FormulaError> {
    let mut p = Parser {
        toks: tokens(text)?,
        pos: 0,
        resolve,
        depth: 0,
    };
    if *p.peek() == Tok::End {
        return Err(p.err("the formula is empty"));
    }
    let e = p.conditional()?;
    if *p.peek() != Tok::End {
        return Err(p.err(format!(
            "expected an operator or the end of the formula, found {}",
            p.found()
        )));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names() -> Vec<String> {
        ["a", "b", "c", "d"].map(String::from).to_vec()
    }

    fn resolve(name: &str) -> Option<Leaf> {
        match name {
            "a" => Some(Leaf::Event(0)),
            "b" => Some(Leaf::Event(1)),
            "c" => Some(Leaf::Event(2)),
            "d" => Some(Leaf::Event(3)),
            "weight" => Some(Leaf::Num(20.0)),
            _ => Constant::from_name(name).map(Leaf::Const),
        }
    }

    fn p(text: &str) -> Result<Expr, FormulaError> {
        parse(text, &resolve)
    }

    #[test]
    fn intel_formulas_parse() {
        let e = p("(a * 64 / 1000000) / DURATIONTIMEINSECONDS").unwrap();
        assert_eq!(
            e.display(&names()).to_string(),
            "a * 64 / 1000000 / DURATIONTIMEINSECONDS"
        );
        let e = p("100 * ( ( b / 2 ) if HYPERTHREADING_ON else ( a ) ) - min(a, b, c)").unwrap();
        assert_eq!(
            e.display(&names()).to_string(),
            "100 * (b / 2 if HYPERTHREADING_ON else a) - min(min(a, b), c)"
        );
        assert_eq!(p("2 * weight").unwrap(), {
            Expr::Bin(
                BinOp::Mul,
                Box::new(Expr::Num(2.0)),
                Box::new(Expr::Num(20.0)),
            )
        });
        assert_eq!(
            p("a - (b - c)").unwrap().display(&names()).to_string(),
            "a - (b - c)"
        );
        assert_eq!(
            p("-(a) * 1e3").unwrap().display(&names()).to_string(),
            "-a * 1000"
        );
    }

    #[test]
    fn errors_point_at_the_problem() {
        assert_eq!(p("a + zz").unwrap_err().offset, 4);
        assert!(p("a + zz").unwrap_err().message.contains("`zz`"));
        assert_eq!(p("(a + b").unwrap_err().offset, 6);
        assert_eq!(p("a b").unwrap_err().offset, 2);
        assert_eq!(p("a $ b").unwrap_err().offset, 2);
        assert_eq!(p("").unwrap_err().message, "the formula is empty");
        assert!(p("min(a)").is_err());
        assert!(p("a if b").is_err());
        assert!(p(&"(".repeat(1000)).is_err());
    }

    fn leaf() -> impl Strategy<Value = Expr> {
        prop_oneof![
            (0u32..1_000_000).prop_map(|n| Expr::Num(f64::from(n) / 8.0)),
            (0usize..4).prop_map(Expr::Event),
            (0usize..Constant::ALL.len()).prop_map(|i| Expr::Const(Constant::ALL[i])),
        ]
    }

    fn expr() -> impl Strategy<Value = Expr> {
        leaf().prop_recursive(6, 64, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|x| Expr::Neg(Box::new(x))),
                (0usize..BinOp::ALL.len(), inner.clone(), inner.clone())
                    .prop_map(|(i, a, b)| Expr::Bin(BinOp::ALL[i], Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone(), inner).prop_map(|(a, b, c)| Expr::If(
                    Box::new(a),
                    Box::new(b),
                    Box::new(c)
                )),
            ]
        })
    }

    proptest! {
        #[test]
        fn printed_formulas_parse_back_to_the_same_expression(e in expr()) {
            let text = e.display(&names()).to_string();
            prop_assert_eq!(p(&text), Ok(e), "{}", text);
        }

        #[test]
        fn arbitrary_text_never_panics(s in "[a-d0-9 ()+*/<>=,.-]{0,40}|[ -~]{0,40}") {
            let _ = p(&s);
        }
    }
}
