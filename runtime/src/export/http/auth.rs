//! Basic auth that a flood of wrong passwords cannot turn against the right scraper.
//!
//! A bcrypt check costs tens of milliseconds of a core on purpose, so whoever can connect
//! could make the server spend every core on them. Three bounds, as the exporter toolkit has:
//!
//! - good credentials are remembered (user and password, at most [`MAX_REMEMBERED`] of them),
//!   so a scraper's repeated scrapes cost one check, not one each;
//! - at most [`Limits::max_password_checks`] checks run at once for addresses that never
//!   sent a wrong password, and as many for those that did: these never take the checks of
//!   the others (a scraper's first scrape among them). A request finding its lane busy gets
//!   `503` at once rather than a thread that waits;
//! - an address whose password was wrong waits before it is checked again, twice as long
//!   after each wrong password (from [`BACKOFF_FIRST`] to [`BACKOFF_MAX`]); meanwhile it gets
//!   `429` without a check. Remembered credentials pass even then, so a flood from the
//!   scraper's own address does not lock the scraper out. And all addresses that failed
//!   before share a quarter of one core for their checks (`503` beyond).

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{locked, Gauges, Limits};
use crate::export::web_config::{basic_credentials, WebConfig};

/// Good credentials remembered; beyond, the memory starts again (only good ones get in).
pub const MAX_REMEMBERED: usize = 64;
/// Addresses whose back-off is remembered; beyond, those whose wait is over are forgotten,
/// then the one whose wait ends first.
const MAX_BACKOFFS: usize = 4096;
/// The wait after a first wrong password.
pub const BACKOFF_FIRST: Duration = Duration::from_secs(1);
/// The longest wait.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// After a check for an address that failed before, no other such check starts for this
/// many times as long as it took: together they take at most a quarter of one core.
const REPEAT_SHARE: u32 = 3;

/// What the gate says of a request.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Answer it.
    Allowed,
    /// No user and password, or wrong ones: `401`.
    Refused,
    /// The address has to wait this long before its next check: `429`.
    Wait(Duration),
    /// Every password check is in use: `503`.
    Busy,
}

struct Backoff {
    failures: u32,
    until: Instant,
}

/// The users a server serves, and what checking them may cost.
pub(super) struct Gate {
    web: Arc<WebConfig>,
    /// Checks at once in each lane.
    max_checks: usize,
    /// Checks running for addresses that never sent a wrong password, and for those that did.
    lanes: [AtomicUsize; 2],
    gauges: Arc<Gauges>,
    remembered: Mutex<HashSet<(String, String)>>,
    backoffs: Mutex<HashMap<IpAddr, Backoff>>,
    /// When an address that failed before may be checked next.
    repeat_after: Mutex<Option<Instant>>,
}

impl Gate {
    pub fn new(web: Arc<WebConfig>, limits: &Limits, gauges: Arc<Gauges>) -> Self {
        Self {
            web,
            max_checks: limits.max_password_checks.max(1),
            lanes: Default::default(),
            gauges,
            remembered: Mutex::new(HashSet::new()),
            backoffs: Mutex::new(HashMap::new()),
            repeat_after: Mutex::new(None),
        }
    }

    /// What can be said of a request without a password check (no users, no or remembered
    /// credentials, an address that must wait): the accept loop answers these itself, with
    /// no thread for a refusal.
    pub fn settle(
        &self,
        peer: IpAddr,
        authorization: Option<&str>,
        now: Instant,
    ) -> Option<Verdict> {
        self.precheck(peer, authorization, now).err()
    }

    /// The verdict without a check, or the credentials to check and whether `peer` has sent
    /// a wrong password before.
    fn precheck(
        &self,
        peer: IpAddr,
        authorization: Option<&str>,
        now: Instant,
    ) -> Result<((String, String), bool), Verdict> {
        if !self.web.authenticates() {
            return Err(Verdict::Allowed);
        }
        let Some(credentials) = authorization.and_then(basic_credentials) else {
            return Err(Verdict::Refused);
        };
        if locked(&self.remembered).contains(&credentials) {
            return Err(Verdict::Allowed);
        }
        match locked(&self.backoffs).get(&peer) {
            Some(b) if b.until > now => Err(Verdict::Wait(b.until - now)),
            failed => Ok((credentials, failed.is_some())),
        }
    }

    /// Whether a request from `peer` with this `Authorization` header may be answered.
    pub fn admit(&self, peer: IpAddr, authorization: Option<&str>, now: Instant) -> Verdict {
        let (credentials, failed_before) = match self.precheck(peer, authorization, now) {
            Ok(c) => c,
            Err(v) => return v,
        };
        if failed_before && locked(&self.repeat_after).is_some_and(|t| now < t) {
            return Verdict::Busy;
        }
        // Two lanes: addresses that sent a wrong password before never take the checks of
        // those that have not (a scraper's first scrape among them).
        let lane = &self.lanes[usize::from(failed_before)];
        if lane.fetch_add(1, Ordering::SeqCst) >= self.max_checks {
            lane.fetch_sub(1, Ordering::SeqCst);
            return Verdict::Busy;
        }
        let checking = &self.gauges.checking;
        checking.fetch_add(1, Ordering::SeqCst);
        self.gauges.password_checks.fetch_add(1, Ordering::SeqCst);
        let started = Instant::now();
        let good = self.web.check(&credentials.0, &credentials.1);
        checking.fetch_sub(1, Ordering::SeqCst);
        lane.fetch_sub(1, Ordering::SeqCst);
        if failed_before {
            // Addresses that failed before share a quarter of a core: the next of their
            // checks waits three times as long as this one took.
            let took = started.elapsed();
            *locked(&self.repeat_after) = Some(now + took * (REPEAT_SHARE + 1));
        }
        if good {
            self.remember(credentials);
            locked(&self.backoffs).remove(&peer);
            Verdict::Allowed
        } else {
            self.back_off(peer, now);
            Verdict::Refused
        }
    }

    fn remember(&self, credentials: (String, String)) {
        let mut remembered = locked(&self.remembered);
        if remembered.len() >= MAX_REMEMBERED {
            remembered.clear();
        }
        remembered.insert(credentials);
    }

    /// Doubles `peer`'s wait after a wrong password.
    fn back_off(&self, peer: IpAddr, now: Instant) {
        let mut backoffs = locked(&self.backoffs);
        if backoffs.len() >= MAX_BACKOFFS && !backoffs.contains_key(&peer) {
            backoffs.retain(|_, b| b.until > now);
            if backoffs.len() >= MAX_BACKOFFS {
                let first = backoffs
                    .iter()
                    .min_by_key(|(_, b)| b.until)
                    .map(|(p, _)| *p);
                if let Some(p) = first {
                    backoffs.remove(&p);
                }
            }
        }
        let b = backoffs.entry(peer).or_insert(Backoff {
            failures: 0,
            until: now,
        });
        b.failures = b.failures.saturating_add(1);
        let wait = BACKOFF_FIRST
            .saturating_mul(1 << (b.failures - 1).min(16))
            .min(BACKOFF_MAX);
        b.until = now + wait;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use std::path::Path;

    fn basic(user_password: &str) -> String {
        let encoded = base64::engine::general_purpose::STANDARD.encode(user_password);
        format!("Basic {encoded}")
    }

    fn gate(max_checks: usize) -> (Gate, Arc<Gauges>) {
        let hash = bcrypt::hash("right", 4).unwrap();
        let text = format!("basic_auth_users:\n  prometheus: '{hash}'\n");
        let web = Arc::new(WebConfig::parse(&text, Path::new(".")).unwrap());
        let gauges = Arc::new(Gauges::default());
        let limits = Limits {
            max_password_checks: max_checks,
            ..Limits::default()
        };
        (Gate::new(web, &limits, Arc::clone(&gauges)), gauges)
    }

    #[test]
    fn good_credentials_are_checked_once() {
        let (gate, gauges) = gate(2);
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        for _ in 0..5 {
            let v = gate.admit(peer, Some(&basic("prometheus:right")), Instant::now());
            assert_eq!(v, Verdict::Allowed);
        }
        assert_eq!(gauges.password_checks(), 1);
    }

    #[test]
    fn a_wrong_password_backs_its_address_off_but_not_remembered_credentials() {
        let (gate, gauges) = gate(2);
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let now = Instant::now();
        assert_eq!(
            gate.admit(peer, Some(&basic("prometheus:right")), now),
            Verdict::Allowed
        );
        let wrong = Some(basic("prometheus:wrong"));
        assert_eq!(gate.admit(peer, wrong.as_deref(), now), Verdict::Refused);
        assert!(matches!(
            gate.admit(peer, wrong.as_deref(), now),
            Verdict::Wait(_)
        ));
        // Checked twice: the good password once, the first wrong one once.
        assert_eq!(gauges.password_checks(), 2);
        assert_eq!(
            gate.admit(peer, Some(&basic("prometheus:right")), now),
            Verdict::Allowed
        );
        // The waits double, up to the most.
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        let mut later = Instant::now();
        let mut waits = Vec::new();
        for _ in 0..8 {
            assert_eq!(gate.admit(other, wrong.as_deref(), later), Verdict::Refused);
            let Verdict::Wait(w) = gate.admit(other, wrong.as_deref(), later) else {
                panic!("backed off")
            };
            waits.push(w);
            later += w;
        }
        assert!(
            waits[1] > waits[0] + Duration::from_millis(500),
            "{waits:?}"
        );
        assert!(waits.iter().all(|w| *w <= BACKOFF_MAX), "{waits:?}");
    }

    #[test]
    fn addresses_that_failed_never_take_the_checks_of_those_that_did_not() {
        let (gate, gauges) = gate(1);
        let (bad, good): (IpAddr, IpAddr) =
            ("127.0.0.5".parse().unwrap(), "127.0.0.6".parse().unwrap());
        let long_ago = Instant::now();
        let wrong = basic("prometheus:wrong");
        assert_eq!(gate.admit(bad, Some(&wrong), long_ago), Verdict::Refused);
        // A check running in the lane of addresses that failed: the address that failed
        // (its wait over) finds none free, a fresh one does.
        gate.lanes[1].fetch_add(1, Ordering::SeqCst);
        let later = long_ago + BACKOFF_MAX;
        assert_eq!(gate.admit(bad, Some(&wrong), later), Verdict::Busy);
        let right = basic("prometheus:right");
        assert_eq!(gate.admit(good, Some(&right), later), Verdict::Allowed);
        assert_eq!(gauges.password_checks(), 2);
    }

    #[test]
    fn addresses_that_failed_before_share_a_quarter_of_a_core() {
        let (gate, gauges) = gate(2);
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.7".parse().unwrap(), "127.0.0.8".parse().unwrap());
        let start = Instant::now();
        let wrong = basic("prometheus:wrong");
        assert_eq!(gate.admit(a, Some(&wrong), start), Verdict::Refused);
        assert_eq!(gate.admit(b, Some(&wrong), start), Verdict::Refused);
        // Both waits are over; a's second check leaves no room for b's right after it.
        let later = start + BACKOFF_FIRST;
        assert_eq!(gate.admit(a, Some(&wrong), later), Verdict::Refused);
        assert_eq!(gate.admit(b, Some(&wrong), later), Verdict::Busy);
        assert_eq!(gauges.password_checks(), 3);
        // A fresh address is not held back.
        let c: IpAddr = "127.0.0.9".parse().unwrap();
        let right = basic("prometheus:right");
        assert_eq!(gate.admit(c, Some(&right), later), Verdict::Allowed);
    }

    #[test]
    fn no_check_when_every_check_is_in_use() {
        let (gate, gauges) = gate(1);
        gate.lanes[0].fetch_add(1, Ordering::SeqCst);
        let peer: IpAddr = "127.0.0.3".parse().unwrap();
        let v = gate.admit(peer, Some(&basic("prometheus:right")), Instant::now());
        assert_eq!(v, Verdict::Busy);
        assert_eq!(gauges.password_checks(), 0);
    }
}
