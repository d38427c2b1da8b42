//! Interim stand-in until the coupled controllers land: uncoupled Reno per subflow.
use crate::tcp::cc::{reno::Reno, CongestionControl};
pub enum CoupledKind {
    Lia,
    Olia,
    Balia,
}
pub fn build(_kind: CoupledKind, n: usize) -> Vec<Box<dyn CongestionControl>> {
    (0..n).map(|_| Box::new(Reno) as Box<dyn CongestionControl>).collect()
}
