pub mod traffic;
