//! The constructors for blocks of one length and for distributed arrays: indexed_block,
//! hindexed_block, subarray and darray. Each reduces to the hindexed and resized nodes of
//! `construct`, one nesting level per array dimension.

use super::{Datatype, TypeError};

/// Storage order of a multi-dimensional array (`MPI_ORDER_C`, `MPI_ORDER_FORTRAN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Row major: the last dimension varies fastest.
    C,
    /// Column major: the first dimension varies fastest.
    Fortran,
}

/// How `MPI_Type_create_darray` spreads one dimension over the processes of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Contiguous blocks of the given size, or of `ceil(gsize / psize)` when `None`.
    Block(Option<usize>),
    /// Blocks of the given size (1 when `None`) dealt round robin.
    Cyclic(Option<usize>),
    /// Not distributed: every process has the whole dimension (its grid size must be 1).
    None,
}

fn bad(why: String) -> TypeError {
    TypeError::BadArgument(why)
}

impl Datatype {
    /// Blocks of `blocklen` copies of `old` at `displs[i]` extents of `old`
    /// (`MPI_Type_create_indexed_block`).
    pub fn indexed_block(
        blocklen: usize,
        displs: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        Datatype::indexed(&vec![blocklen; displs.len()], displs, old)
    }

    /// Blocks of `blocklen` copies of `old` at `displs[i]` bytes
    /// (`MPI_Type_create_hindexed_block`).
    pub fn hindexed_block(
        blocklen: usize,
        displs: &[isize],
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        Datatype::hindexed(&vec![blocklen; displs.len()], displs, old)
    }

    /// The `subsizes` block starting at `starts` of an array of `sizes` elements of `old`
    /// (`MPI_Type_create_subarray`); lower bound 0 and the extent of the whole array.
    pub fn subarray(
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        check_dims(sizes.len(), &[("subsizes", subsizes.len()), ("starts", starts.len())])?;
        let mut dims = Vec::with_capacity(sizes.len());
        for (d, ((&size, &sub), &start)) in sizes.iter().zip(subsizes).zip(starts).enumerate() {
            if size == 0 || sub == 0 || sub > size || start > size - sub {
                return Err(bad(format!(
                    "dimension {d}: a block of {sub} from {start} does not fit a size of {size}"
                )));
            }
            dims.push((size, vec![(start, sub)]));
        }
        nest(dims, order, old)
    }

    /// The part of an array of `gsizes` elements of `old` that process `rank` owns when the
    /// array is spread over a `psizes` grid of processes as `distribs` say
    /// (`MPI_Type_create_darray`). Ranks take grid positions in row-major order whatever the
    /// array's order; the result has lower bound 0 and the extent of the whole array.
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: usize,
        rank: usize,
        gsizes: &[usize],
        distribs: &[Distribution],
        psizes: &[usize],
        order: Order,
        old: &Datatype,
    ) -> Result<Datatype, TypeError> {
        check_dims(gsizes.len(), &[("distribs", distribs.len()), ("psizes", psizes.len())])?;
        let grid = psizes.iter().try_fold(1usize, |a, &p| a.checked_mul(p));
        if grid != Some(size) || rank >= size {
            return Err(bad(format!("grid {psizes:?} does not hold rank {rank} of {size}")));
        }
        // Row-major grid coordinates of `rank`.
        let mut coords = vec![0; psizes.len()];
        let mut rest = rank;
        for d in (0..psizes.len()).rev() {
            coords[d] = rest % psizes[d];
            rest /= psizes[d];
        }
        let mut dims = Vec::with_capacity(gsizes.len());
        for d in 0..gsizes.len() {
            let (g, p, c) = (gsizes[d], psizes[d], coords[d]);
            if g == 0 {
                return Err(bad(format!("dimension {d} has size 0")));
            }
            let blocks = match distribs[d] {
                Distribution::None => {
                    if p != 1 {
                        return Err(bad(format!("dimension {d} is not distributed over {p}")));
                    }
                    vec![(0, g)]
                }
                Distribution::Block(b) => {
                    let b = b.unwrap_or(g.div_ceil(p));
                    if b == 0 || b.checked_mul(p).is_none_or(|all| all < g) {
                        return Err(bad(format!("dimension {d}: {p} blocks of {b} miss {g}")));
                    }
                    let start = (c * b).min(g);
                    vec![(start, b.min(g - start))]
                }
                Distribution::Cyclic(b) => {
                    let b = b.unwrap_or(1);
                    if b == 0 {
                        return Err(bad(format!("dimension {d}: cyclic blocks of 0")));
                    }
                    let step = b.checked_mul(p).ok_or(TypeError::Overflow)?;
                    (c * b..g).step_by(step).map(|s| (s, b.min(g - s))).collect()
                }
            };
            dims.push((g, blocks));
        }
        nest(dims, order, old)
    }
}

fn check_dims(n: usize, others: &[(&'static str, usize)]) -> Result<(), TypeError> {
    if n == 0 {
        return Err(bad("an array needs at least one dimension".into()));
    }
    for &(what, got) in others {
        if got != n {
            return Err(TypeError::LengthMismatch { what, expected: n, got });
        }
    }
    Ok(())
}

/// Builds the type that selects, in each dimension `(size, blocks)`, the `(start, len)` blocks
/// of elements, from the fastest-varying dimension out; each level is resized to its whole
/// row so the next one can count in rows.
fn nest(
    mut dims: Vec<(usize, Vec<(usize, usize)>)>,
    order: Order,
    old: &Datatype,
) -> Result<Datatype, TypeError> {
    if order == Order::C {
        dims.reverse();
    }
    let mut t = old.clone();
    let mut row = old.extent();
    for (size, blocks) in dims {
        let lens: Vec<usize> = blocks.iter().map(|b| b.1).collect();
        let displs = blocks
            .iter()
            .map(|b| isize::try_from(b.0).ok().and_then(|s| s.checked_mul(row)))
            .collect::<Option<Vec<isize>>>()
            .ok_or(TypeError::Overflow)?;
        let level = Datatype::hindexed(&lens, &displs, &t)?;
        row = isize::try_from(size).ok().and_then(|s| s.checked_mul(row)).ok_or(TypeError::Overflow)?;
        t = Datatype::resized(&level, 0, row)?;
    }
    Ok(t)
}
