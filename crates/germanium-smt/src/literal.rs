//! Integer and rational literals of any size.
//!
//! Values that fit in `i128` are stored as numbers (and folded by the simplifier); larger
//! values are kept as canonical decimal text, so equal values always have equal
//! representations and derived equality is value equality.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// An integer literal.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum IntLit {
    /// Any value in `i128`.
    Small(i128),
    /// A value outside `i128`: optional `-`, then digits without leading zeros.
    Big(Arc<str>),
}

impl IntLit {
    /// Parses an optionally signed decimal numeral (`-12`, `+7`, `0042`).
    pub fn parse(text: &str) -> Option<IntLit> {
        let (negative, digits) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            return Some(IntLit::Small(0));
        }
        let signed = if negative {
            format!("-{digits}")
        } else {
            digits.to_string()
        };
        Some(match signed.parse::<i128>() {
            Ok(value) => IntLit::Small(value),
            Err(_) => IntLit::Big(signed.into()),
        })
    }

    /// The value as `i128`, if it fits.
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            IntLit::Small(v) => Some(*v),
            IntLit::Big(_) => None,
        }
    }

    pub fn is_negative(&self) -> bool {
        match self {
            IntLit::Small(v) => *v < 0,
            IntLit::Big(text) => text.starts_with('-'),
        }
    }

    pub fn is_zero(&self) -> bool {
        *self == IntLit::Small(0)
    }

    pub fn is_one(&self) -> bool {
        *self == IntLit::Small(1)
    }

    /// The value with the opposite sign.
    pub fn negated(&self) -> IntLit {
        match self {
            IntLit::Small(v) => match v.checked_neg() {
                Some(n) => IntLit::Small(n),
                None => IntLit::Big(v.to_string()[1..].into()),
            },
            IntLit::Big(text) => {
                let flipped = match text.strip_prefix('-') {
                    Some(abs) => abs.to_string(),
                    None => format!("-{text}"),
                };
                // `-(i128::MIN)` is big, but its negation is small again.
                IntLit::parse(&flipped).unwrap_or(IntLit::Big(flipped.into()))
            }
        }
    }

    /// Decimal digits of the absolute value.
    pub fn abs_digits(&self) -> String {
        match self {
            IntLit::Small(v) => v.unsigned_abs().to_string(),
            IntLit::Big(text) => text.trim_start_matches('-').to_string(),
        }
    }
}

impl From<i128> for IntLit {
    fn from(value: i128) -> Self {
        IntLit::Small(value)
    }
}

impl From<i32> for IntLit {
    fn from(value: i32) -> Self {
        IntLit::Small(value.into())
    }
}

impl From<i64> for IntLit {
    fn from(value: i64) -> Self {
        IntLit::Small(value.into())
    }
}

/// Plain decimal text (`-5`), not SMT-LIB syntax; see the printer for that.
impl fmt::Display for IntLit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntLit::Small(v) => write!(f, "{v}"),
            IntLit::Big(text) => f.write_str(text),
        }
    }
}

/// A rational literal `num/den` with `den > 0`; reduced to lowest terms when both parts fit
/// in `i128`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct RealLit {
    num: IntLit,
    den: IntLit,
}

impl RealLit {
    /// `num/den`, or `None` when `den` is zero.
    pub fn new(num: IntLit, den: IntLit) -> Option<RealLit> {
        if den.is_zero() {
            return None;
        }
        let (num, den) = if den.is_negative() {
            (num.negated(), den.negated())
        } else {
            (num, den)
        };
        Some(match (num.as_i128(), den.as_i128()) {
            (Some(n), Some(d)) => RealLit::reduced(n, d),
            _ => RealLit { num, den },
        })
    }

    /// The integer `value` as a rational.
    pub fn integer(value: IntLit) -> RealLit {
        RealLit {
            num: value,
            den: IntLit::Small(1),
        }
    }

    /// Parses a decimal such as `1.25`, `-3`, `0.5`.
    pub fn parse_decimal(text: &str) -> Option<RealLit> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        if !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let num = IntLit::parse(&format!("{whole}{fraction}"))?;
        let den = IntLit::parse(&format!("1{}", "0".repeat(fraction.len())))?;
        RealLit::new(num, den)
    }

    pub fn numerator(&self) -> &IntLit {
        &self.num
    }

    pub fn denominator(&self) -> &IntLit {
        &self.den
    }

    pub fn is_integer(&self) -> bool {
        self.den.is_one()
    }

    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    pub fn is_negative(&self) -> bool {
        self.num.is_negative()
    }

    /// Both parts as `i128`, when they fit.
    pub fn as_i128_pair(&self) -> Option<(i128, i128)> {
        Some((self.num.as_i128()?, self.den.as_i128()?))
    }

    pub fn negated(&self) -> RealLit {
        RealLit {
            num: self.num.negated(),
            den: self.den.clone(),
        }
    }

    /// Exact sum, or `None` if an intermediate value leaves `i128`.
    pub fn checked_add(&self, other: &RealLit) -> Option<RealLit> {
        let (a, b) = self.as_i128_pair()?;
        let (c, d) = other.as_i128_pair()?;
        let num = a.checked_mul(d)?.checked_add(c.checked_mul(b)?)?;
        Some(RealLit::reduced(num, b.checked_mul(d)?))
    }

    /// Exact product, or `None` if an intermediate value leaves `i128`.
    pub fn checked_mul(&self, other: &RealLit) -> Option<RealLit> {
        let (a, b) = self.as_i128_pair()?;
        let (c, d) = other.as_i128_pair()?;
        Some(RealLit::reduced(a.checked_mul(c)?, b.checked_mul(d)?))
    }

    /// Exact comparison, or `None` if it would need more than `i128`.
    pub fn checked_cmp(&self, other: &RealLit) -> Option<Ordering> {
        let (a, b) = self.as_i128_pair()?;
        let (c, d) = other.as_i128_pair()?;
        Some(a.checked_mul(d)?.cmp(&c.checked_mul(b)?))
    }

    fn reduced(num: i128, den: i128) -> RealLit {
        // den > 0 here; gcd of (i128::MIN, x) could overflow on abs, so work unsigned.
        let g = gcd(num.unsigned_abs(), den.unsigned_abs()).max(1);
        let g = g as i128; // g divides den, which fits in i128.
        RealLit {
            num: IntLit::Small(num / g),
            den: IntLit::Small(den / g),
        }
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Plain text (`-1/3`, `2`), not SMT-LIB syntax.
impl fmt::Display for RealLit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_integer() {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_parsing_is_canonical() {
        assert_eq!(IntLit::parse("0042"), Some(IntLit::Small(42)));
        assert_eq!(IntLit::parse("-0"), Some(IntLit::Small(0)));
        assert_eq!(IntLit::parse("+7"), Some(IntLit::Small(7)));
        assert_eq!(IntLit::parse(""), None);
        assert_eq!(IntLit::parse("-"), None);
        assert_eq!(IntLit::parse("1e3"), None);
        let big = "123456789012345678901234567890123456789012";
        assert_eq!(
            IntLit::parse(&format!("000{big}")),
            Some(IntLit::Big(big.into()))
        );
        assert_eq!(
            IntLit::parse(&format!("-{big}")).unwrap().negated(),
            IntLit::parse(big).unwrap()
        );
    }

    #[test]
    fn negation_at_the_i128_edge() {
        let min = IntLit::Small(i128::MIN);
        let flipped = min.negated();
        assert!(matches!(flipped, IntLit::Big(_)));
        assert_eq!(flipped.negated(), min);
        assert_eq!(flipped.abs_digits(), min.abs_digits());
    }

    #[test]
    fn rationals_are_reduced() {
        let r = RealLit::new(IntLit::Small(6), IntLit::Small(-4)).unwrap();
        assert_eq!(r.to_string(), "-3/2");
        assert_eq!(RealLit::new(IntLit::Small(1), IntLit::Small(0)), None);
        assert_eq!(RealLit::parse_decimal("1.25").unwrap().to_string(), "5/4");
        assert_eq!(RealLit::parse_decimal("-3").unwrap().to_string(), "-3");
        assert_eq!(RealLit::parse_decimal("3.0").unwrap().to_string(), "3");
    }

    #[test]
    fn rational_arithmetic() {
        let half = RealLit::new(1i64.into(), 2i64.into()).unwrap();
        let third = RealLit::new(1i64.into(), 3i64.into()).unwrap();
        assert_eq!(half.checked_add(&third).unwrap().to_string(), "5/6");
        assert_eq!(half.checked_mul(&third).unwrap().to_string(), "1/6");
        assert_eq!(half.checked_cmp(&third), Some(Ordering::Greater));
        let huge = RealLit::integer(IntLit::Small(i128::MAX));
        assert_eq!(huge.checked_add(&huge), None);
    }
}
