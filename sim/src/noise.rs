//! The detours a busy node takes from a rank (`loggp.noise`, commchar.models.noise):
//! interrupts, kernel threads, a hypervisor taking the core. A tightly coupled program
//! pays every rank's: its partners wait for the one held up.
//!
//! A replay draws each rank's detours as a Poisson process in simulated time, from the
//! model's bins (rate per rank and second, mean length) at the replay's rank count, and
//! charges one where it holds the CPU of a rank that is inside the library: a send, a
//! message's arrival, a forward or the library's own work waits for its end. A detour
//! that starts during a traced computation is dropped: the computation's measured time
//! already holds it.
//!
//! A message's costs already hold some: each is the mean of a point-to-point probe that
//! ran with HELD_BY_COSTS ranks busy, and that mean holds the detours that hit either of
//! them while it measured. p ranks of a tightly coupled program lose p F_p of a rank's
//! time to the detours of all (F_q: the fraction of a rank's time the bins measured for q
//! take), of which the costs hold 2 F_2; each rank draws the rest, a share 1 - 2 F_2 /
//! (p F_p) of its own detours (the Poisson process thinned, every bin alike), none at p =
//! 2 (`drawn_share`).
//!
//! The draws are SplitMix64 (Steele, Lea and Flood, 2014) seeded from the seed and the
//! rank: a fixed seed replays to the same answer on every platform, and several seeds
//! give the expected time and its spread. It is ten lines, so the simulator keeps no
//! random-number crate whose streams may change between its versions.

use serde_json::Value;

use crate::error::{input, Result};
use crate::per_p::{by_p_rows, row_for_ranks};

/// Ranks whose detours the costs of a message hold: the point-to-point probes' two.
pub const HELD_BY_COSTS: u32 = 2;

/// The fraction of a rank's time a row's bins take.
fn fraction(bins: &[(u64, u64)]) -> f64 {
    bins.iter().map(|&(gap, len)| len as f64 / gap as f64).sum()
}

/// The model's detour bins per rank count measured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Noise {
    /// (p, [(mean gap between detours ps, length ps)]), p increasing.
    rows: Vec<(u32, Vec<(u64, u64)>)>,
    /// The draws' seed.
    pub seed: u64,
}

impl Noise {
    /// From (p, [(rate per second, mean us)]) rows, p increasing.
    pub fn from_rows(rows: Vec<(u32, Vec<(f64, f64)>)>, seed: u64) -> Noise {
        let rows = rows
            .into_iter()
            .map(|(p, bins)| {
                let bins = bins
                    .into_iter()
                    .filter(|&(rate, us)| rate > 0.0 && us > 0.0)
                    .map(|(rate, us)| ((1e12 / rate).round() as u64, (us * 1e6).round() as u64))
                    .filter(|&(gap, len)| gap > 0 && len > 0)
                    .collect();
                (p, bins)
            })
            .collect();
        Noise { rows, seed }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.iter().all(|(_, bins)| bins.is_empty())
    }

    /// The bins of the largest p measured that is at most `ranks` (the smallest p
    /// measured when every one is larger).
    pub fn bins_for(&self, ranks: u32) -> &[(u64, u64)] {
        row_for_ranks(&self.rows, ranks, |r| r.0).map_or(&[], |(_, bins)| bins.as_slice())
    }

    /// The share of its detours (the bins at `ranks`) each rank of a replay of `ranks`
    /// draws: what the ranks lose beyond what the costs hold (see the module), in [0, 1].
    pub fn drawn_share(&self, ranks: u32) -> f64 {
        let at = fraction(self.bins_for(ranks));
        if at.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return 0.0;
        }
        let held = HELD_BY_COSTS as f64 * fraction(self.bins_for(HELD_BY_COSTS));
        (1.0 - held / (ranks as f64 * at)).clamp(0.0, 1.0)
    }

    /// The p whose bins a replay of `ranks` draws from, the fraction of a rank's time they
    /// take, and the fraction its draws take (`drawn_share` of it).
    pub fn summary_for(&self, ranks: u32) -> Option<(u32, f64, f64)> {
        let (p, bins) = row_for_ranks(&self.rows, ranks, |r| r.0)?;
        let measured = fraction(bins);
        Some((*p, measured, measured * self.drawn_share(ranks)))
    }
}

/// The noise of a model's `libraries.<lib>.loggp.noise` entry (`by_p`: [{p, bins:
/// [[lower_us, rate_per_s, mean_us]]}]; None or null: none), read with the loggp section.
pub fn from_entry(entry: Option<&Value>, path: &str, seed: u64) -> Result<Noise> {
    let Some(entry) = entry.filter(|e| !e.is_null()) else {
        return Ok(Noise {
            rows: Vec::new(),
            seed,
        });
    };
    let bad = |what: &str| input(format!("{path}: loggp noise: {what}"));
    let rows = by_p_rows(entry, &format!("{path}: loggp noise"))?;
    let mut out = Vec::with_capacity(rows.len());
    for (p, row) in rows {
        let Some(bins) = row.get("bins").and_then(Value::as_array) else {
            return bad("bins is not a list");
        };
        let mut parsed = Vec::with_capacity(bins.len());
        for b in bins {
            let nums: Option<Vec<f64>> = b
                .as_array()
                .filter(|a| a.len() == 3)
                .map(|a| a.iter().filter_map(Value::as_f64).collect());
            match nums {
                Some(v) if v.len() == 3 && v.iter().all(|x| x.is_finite() && *x >= 0.0) => {
                    parsed.push((v[1], v[2]))
                }
                _ => {
                    return bad("a bin that is not [lower_us, rate_per_s, mean_us] of numbers >= 0")
                }
            }
        }
        out.push((p, parsed));
    }
    Ok(Noise::from_rows(out, seed))
}

/// SplitMix64's next output.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform draw in [0, 1).
fn unit(state: &mut u64) -> f64 {
    (splitmix(state) >> 11) as f64 / (1u64 << 53) as f64
}

#[derive(Debug, Clone, Copy)]
struct RankDetours {
    state: u64,
    /// The next detour not yet consumed: its start and length (ps).
    start: u64,
    len: u64,
}

/// Every rank's detours of one run, drawn as the run reaches them.
#[derive(Debug, Clone)]
pub struct Detours {
    ranks: Vec<RankDetours>,
    /// (cumulative probability, length ps) of each bin.
    bins: Vec<(f64, u64)>,
    /// Detours per ps, all bins.
    rate: f64,
}

impl Detours {
    /// None when the model's bins at this rank count hold no detour, or the costs hold
    /// every one (`Noise::drawn_share`).
    pub fn new(noise: &Noise, ranks: usize) -> Option<Detours> {
        let chosen = noise.bins_for(ranks as u32);
        let rate: f64 = chosen.iter().map(|&(gap, _)| 1.0 / gap as f64).sum::<f64>()
            * noise.drawn_share(ranks as u32);
        if rate.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let mut acc = 0.0;
        let bins = chosen
            .iter()
            .map(|&(gap, len)| {
                acc += 1.0 / gap as f64 / rate;
                (acc, len)
            })
            .collect();
        let mut d = Detours {
            ranks: Vec::with_capacity(ranks),
            bins,
            rate,
        };
        for r in 0..ranks as u64 {
            let mut state = noise.seed ^ r.wrapping_mul(0xD1B5_4A32_D192_ED03);
            splitmix(&mut state); // decorrelates neighbouring seeds
            let mut rd = RankDetours {
                state,
                start: 0,
                len: 0,
            };
            Self::draw(&d.bins, d.rate, &mut rd);
            d.ranks.push(rd);
        }
        Some(d)
    }

    /// The detour after the current one: an exponential gap from its start, a bin by its
    /// share of the rate.
    fn draw(bins: &[(f64, u64)], rate: f64, rd: &mut RankDetours) {
        let gap = -(1.0 - unit(&mut rd.state)).ln() / rate;
        rd.start = rd
            .start
            .saturating_add(gap.min(u64::MAX as f64 / 2.0) as u64);
        let u = unit(&mut rd.state);
        let at = bins
            .partition_point(|&(cum, _)| cum <= u)
            .min(bins.len() - 1);
        rd.len = bins[at].1;
    }

    /// When rank `r`'s CPU is free again if a detour holds it at `t` (None: it is free);
    /// the detours that started and ended before `t` are consumed (nothing needed the CPU).
    pub fn taken_until(&mut self, r: usize, t: u64) -> Option<u64> {
        let rd = &mut self.ranks[r];
        while rd.start <= t {
            let end = rd.start.saturating_add(rd.len);
            Self::draw(&self.bins, self.rate, rd);
            if end > t {
                return Some(end);
            }
        }
        None
    }

    /// Drops rank `r`'s detours that start before `t`: they fell in a traced computation.
    pub fn skip_until(&mut self, r: usize, t: u64) {
        let rd = &mut self.ranks[r];
        while rd.start < t {
            Self::draw(&self.bins, self.rate, rd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Detours at 4 ranks and none at 2 (whose costs then hold none): a replay of 4 ranks
    /// draws every one.
    fn noise(rate_per_s: f64, us: f64, seed: u64) -> Noise {
        Noise::from_rows(vec![(2, vec![]), (4, vec![(rate_per_s, us)])], seed)
    }

    /// Rank 0's detours over one simulated second, a CPU activity every microsecond: their
    /// count and the fraction of the second they took.
    fn one_second(d: &mut Detours) -> (u64, f64) {
        let second = 1_000_000_000_000u64;
        let (mut count, mut lost, mut t) = (0u64, 0u64, 0u64);
        while t < second {
            match d.taken_until(0, t) {
                Some(end) => {
                    count += 1;
                    lost += end - t;
                    t = end;
                }
                None => t += 1_000_000,
            }
        }
        (count, lost as f64 / second as f64)
    }

    #[test]
    fn the_detours_drawn_hold_the_rate_and_the_time_lost_the_model_gives() {
        let mut d = Detours::new(&noise(1000.0, 20.0, 7), 4).unwrap();
        let (count, fraction) = one_second(&mut d);
        // 1000 a second of 20 us: 2% of the time; each is met within a microsecond of its start
        assert!((900..1100).contains(&count), "{count}");
        assert!((0.017..0.021).contains(&fraction), "{fraction}");
    }

    #[test]
    fn a_replay_draws_only_the_detours_its_costs_do_not_hold() {
        // measured at p = 2 only: 2% of a rank's time; the costs hold two ranks' detours
        let at_two = Noise::from_rows(vec![(2, vec![(1000.0, 20.0)])], 7);
        assert_eq!(at_two.drawn_share(2), 0.0);
        assert!(Detours::new(&at_two, 2).is_none());
        assert_eq!(at_two.drawn_share(1), 0.0);
        assert!((at_two.drawn_share(4) - 0.5).abs() < 1e-12);
        assert!((at_two.drawn_share(16) - 0.875).abs() < 1e-12);
        // each of 4 ranks draws half its detours: p F_p - 2 F_2 of the time in all
        let (count, fraction) = one_second(&mut Detours::new(&at_two, 4).unwrap());
        assert!((430..570).contains(&count), "{count}");
        assert!((0.008..0.0115).contains(&fraction), "{fraction}");
        // a busier node at 16 ranks: 16 x 2% in all, of which the costs hold 2 x 1%
        let busier = Noise::from_rows(
            vec![(2, vec![(500.0, 20.0)]), (16, vec![(1000.0, 20.0)])],
            7,
        );
        assert!((busier.drawn_share(16) - (1.0 - 0.02 / 0.32)).abs() < 1e-12);
        let (p, measured, drawn) = busier.summary_for(16).unwrap();
        assert_eq!(p, 16);
        assert!((measured - 0.02).abs() < 1e-12 && (drawn - 0.02 * 0.9375).abs() < 1e-12);
        assert_eq!(at_two.summary_for(2).unwrap(), (2, 0.02, 0.0));
    }

    #[test]
    fn a_seed_replays_alike_and_another_differs() {
        let starts = |seed| {
            let mut d = Detours::new(&noise(1e4, 5.0, seed), 4).unwrap();
            (0..50u64)
                .map(|k| d.taken_until(1, k * 10_000_000))
                .collect::<Vec<_>>()
        };
        assert_eq!(starts(1), starts(1));
        assert_ne!(starts(1), starts(2));
    }

    #[test]
    fn detours_in_a_computation_are_dropped_and_a_rank_count_takes_its_row() {
        let mut d = Detours::new(&noise(1e6, 0.5, 3), 4).unwrap(); // one every us
        d.skip_until(0, 1_000_000_000);
        assert!(d.ranks[0].start >= 1_000_000_000);
        let rows = Noise::from_rows(vec![(2, vec![(10.0, 1.0)]), (8, vec![(20.0, 2.0)])], 0);
        assert_eq!(rows.bins_for(1), rows.bins_for(2));
        assert_eq!(rows.bins_for(7)[0].1, 1_000_000);
        assert_eq!(rows.bins_for(16)[0].1, 2_000_000);
        assert!(Detours::new(&Noise::default(), 4).is_none());
    }

    #[test]
    fn a_malformed_section_is_refused_in_one_line() {
        for bad in [
            r#"{"by_p": 3}"#,
            r#"{"by_p": [{"p": 0, "bins": []}]}"#,
            r#"{"by_p": [{"p": 4, "bins": []}, {"p": 2, "bins": []}]}"#,
            r#"{"by_p": [{"p": 2, "bins": [[1, -1, 2]]}]}"#,
        ] {
            let e = from_entry(Some(&serde_json::from_str(bad).unwrap()), "m.json", 0).unwrap_err();
            assert!(e.to_string().starts_with("m.json: loggp noise"), "{e}");
        }
        let good = r#"{"by_p": [{"p": 2, "bins": [[1, 100, 1.5]]}]}"#;
        let ok = from_entry(Some(&serde_json::from_str(good).unwrap()), "m.json", 0).unwrap();
        assert_eq!(ok.bins_for(2), &[(10_000_000_000, 1_500_000)]);
    }
}
