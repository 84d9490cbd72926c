fn main() {
    // The soname makes the library a drop-in for MPICH's (see DESIGN.md, "MPI C ABI").
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");
}
