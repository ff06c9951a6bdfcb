/* hello - the program that fork_exec runs: exits at once (LMbench's hello). */
int main(void)
{
	return 0;
}
