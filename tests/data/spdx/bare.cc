// A fixture for check_spdx: no license header.
int main() { return 0; }
