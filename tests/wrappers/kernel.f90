! A Fortran routine called from C (mixed.c) through ISO_C_BINDING: what mpifort can link
! while Ferry has no Fortran MPI bindings.
subroutine twice(x) bind(c, name="twice")
    use iso_c_binding
    real(c_double), intent(inout) :: x
    x = 2 * x
end subroutine twice
