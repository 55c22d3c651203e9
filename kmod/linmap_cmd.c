// SPDX-License-Identifier: GPL-2.0
/*
 * linmap_test core: the one parameter grammar ("name=value" tokens) and
 * the skeleton every command file shares. See struct lm_cmd in linmap.h.
 */

#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "linmap.h"

/* ---- parameters --------------------------------------------------------- */

static int parse_value(const struct lm_param *p, char *val)
{
	char *item;

	switch (p->type) {
	case LM_ULONG:
		return kstrtoul(val, 0, p->val);
	case LM_LIST:
		*p->nr = 0;
		while ((item = strsep(&val, ":")) != NULL) {
			if (*p->nr == p->max || kstrtoul(item, 0,
							 &p->val[*p->nr]))
				return -EINVAL;
			(*p->nr)++;
		}
		return 0;
	case LM_RANGE:
		item = strsep(&val, ",");
		if (!val || kstrtoul(item, 0, &p->val[0]) ||
		    kstrtoul(val, 0, &p->val[1]))
			return -EINVAL;
		/* add_memory() checks the memory-block alignment itself. */
		return p->val[1] && PAGE_ALIGNED(p->val[0] | p->val[1]) ?
			0 : -EINVAL;
	}
	return -EINVAL;
}

/*
 * Parse white-space separated "name=value" tokens into what @params name.
 * The word "run" may stand for a command with no parameters; any other
 * token without a value, an unknown name or a bad value is -EINVAL.
 */
int lm_parse_params(char *buf, const struct lm_param *params, unsigned int n)
{
	char *tok;
	unsigned int i;

	while ((tok = strsep(&buf, " \t\n")) != NULL) {
		char *val = strchr(tok, '=');

		if (!*tok)
			continue;
		if (!val) {
			if (!strcmp(tok, "run"))
				continue;
			return -EINVAL;
		}
		*val++ = '\0';
		for (i = 0; i < n && strcmp(tok, params[i].name); i++)
			;
		if (i == n || parse_value(&params[i], val))
			return -EINVAL;
	}
	return 0;
}

/* ---- commands ----------------------------------------------------------- */

static int cmd_show(struct seq_file *m, void *v)
{
	struct lm_cmd *cmd = m->private;

	mutex_lock(&lm_lock);
	if (cmd->last)
		cmd->show(m, cmd->last);
	else
		seq_puts(m, "none\n");
	mutex_unlock(&lm_lock);
	return 0;
}

static int cmd_open(struct inode *inode, struct file *file)
{
	return single_open(file, cmd_show, inode->i_private);
}

static int cmd_parse(struct lm_cmd *cmd, char *buf, void *r)
{
	struct lm_param p[LM_PARAMS_MAX];

	if (cmd->parse)
		return cmd->parse(buf, r);
	return lm_parse_params(buf, p, cmd->params ? cmd->params(r, p) : 0);
}

/* A command written from user space, as a string. */
int lm_copy_cmd(const char __user *ubuf, size_t len, char *buf, size_t size)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return 0;
}

static ssize_t cmd_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	struct lm_cmd *cmd = file_inode(file)->i_private;
	char buf[160];
	void *r;
	int ret;

	if (cmd->available) {
		ret = cmd->available();
		if (ret)
			return ret;
	}
	ret = lm_copy_cmd(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	r = kzalloc(cmd->size, GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	if (cmd->defaults)
		cmd->defaults(r);
	ret = cmd_parse(cmd, strim(buf), r);
	if (!ret && cmd->check)
		ret = cmd->check(r);
	if (ret) {
		kfree(r);
		return ret;
	}
	mutex_lock(&lm_lock);
	ret = cmd->run(r);
	lm_cmd_forget(cmd);
	cmd->last = r;
	mutex_unlock(&lm_lock);
	return ret < 0 ? ret : len;
}

static const struct file_operations lm_cmd_fops = {
	.owner = THIS_MODULE,
	.open = cmd_open,
	.read = seq_read,
	.write = cmd_write,
	.llseek = seq_lseek,
	.release = single_release,
};

/* Drop the kept result; under lm_lock or once nothing else can run. */
void lm_cmd_forget(struct lm_cmd *cmd)
{
	if (cmd->last && cmd->release)
		cmd->release(cmd->last);
	kfree(cmd->last);
	cmd->last = NULL;
}

void lm_files_create(struct dentry *dir, const struct lm_file *f,
		     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++, f++)
		debugfs_create_file(f->name, f->mode, dir, f->cmd,
				    f->cmd ? &lm_cmd_fops : f->fops);
}
